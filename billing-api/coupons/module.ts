import { sqlMigration, type DomainModule } from '../module.js'
import { CouponSchema } from './coupon.entity.js'
import { couponRoutes } from './routes.js'

export const couponsModule: DomainModule = {
  name: 'coupons',
  entities: [CouponSchema],
  migrations: [sqlMigration('coupons_0001_init', new URL('./migrations/0001_init.sql', import.meta.url))],
  routes: couponRoutes,
}
