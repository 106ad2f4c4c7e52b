import { walletSchema, walletTransactionSchema } from './response-schemas.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { walletRoutes } from './routes.js'
import { WalletSchema, WalletTransactionSchema } from './wallet.entity.js'

export const walletsModule: DomainModule = {
  name: 'wallets',
  entities: [WalletSchema, WalletTransactionSchema],
  migrations: [
    sqlMigration('wallets_0001_init', new URL('./migrations/0001_init.sql', import.meta.url)),
    sqlMigration('wallets_0002_auto_topup', new URL('./migrations/0002_auto_topup.sql', import.meta.url)),
    sqlMigration('wallets_0003_description', new URL('./migrations/0003_description.sql', import.meta.url)),
    sqlMigration('wallets_0004_terminate', new URL('./migrations/0004_terminate.sql', import.meta.url)),
  ],
  schemas: [walletSchema, walletTransactionSchema],
  routes: walletRoutes,
}
