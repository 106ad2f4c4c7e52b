// The wallets domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { creditsToCurrency } from './allocate.js'
export { balancesOf } from './balances.js'
export { expireWalletCredits } from './expire-credits.js'
export { debitWallet, topUpWallet } from './ledger.js'
export { createWallet } from './service.js'
export { onInvoicePaid } from './top-up-payments.js'
export { lockWallet } from './wallet-rows.js'
