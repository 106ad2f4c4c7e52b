import { couponSchema, couponAssociationSchema } from './response-schemas.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { CouponSchema } from './coupon.entity.js'
import { CouponAssociationSchema } from './coupon-association.entity.js'
import { couponAssociationRoutes } from './coupon-association.routes.js'
import { couponRoutes } from './routes.js'

export const couponsModule: DomainModule = {
  name: 'coupons',
  entities: [CouponSchema, CouponAssociationSchema],
  migrations: [
    sqlMigration('coupons_0001_init', new URL('./migrations/0001_init.sql', import.meta.url)),
    sqlMigration('coupons_0002_associations', new URL('./migrations/0002_associations.sql', import.meta.url)),
  ],
  schemas: [couponSchema, couponAssociationSchema],
  routes: async (app, ctx) => {
    await couponRoutes(app, ctx)
    await couponAssociationRoutes(app, ctx)
  },
}
