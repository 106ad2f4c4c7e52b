// Prepaid wallets through the SDK.
import assert from 'node:assert/strict'
import { needing, type Scenario } from './context.js'

const OPS = [
  'wallets.createWallet', 'wallets.getWallet', 'wallets.topUpWallet', 'wallets.getWalletBalance', 'wallets.getWalletTransactions',
  'wallets.queryWallet', 'wallets.queryWalletTransaction', 'wallets.getWalletsByCustomerId', 'wallets.getCustomerWallets',
  'wallets.updateWallet', 'wallets.terminateWallet',
]

export async function wallets(s: Scenario): Promise<void> {
  const { sdk, rec } = s
  await needing(s, ['customer'], OPS, async (customerId) => {
    const w = await rec.call('wallets.createWallet', () => sdk.wallets.createWallet({ customerId, currency: 'USD', description: 'Prepaid' }), (r) => {
      assert.equal(r.customerId, customerId)
      assert.equal(r.currency?.toUpperCase(), 'USD')
    })
    const id = w?.id
    if (!id) return OPS.slice(1).forEach((op) => rec.skip(op, 'a wallet'))
    await rec.call('wallets.getWallet', () => sdk.wallets.getWallet(id), (r) => {
      assert.equal(r.customerId, customerId)
      assert.equal(r.description, 'Prepaid')
      assert.equal(r.walletStatus, 'active')
    })
    // credits are not money: Meterline writes them without trailing zeros (100.50 credits -> "100.5")
    await rec.call('wallets.topUpWallet', () => sdk.wallets.topUpWallet(id, { creditsToAdd: '100.50', transactionReason: 'PURCHASED_CREDIT_DIRECT', idempotencyKey: 'top-1' }), (r) => {
      assert.equal(r.wallet?.balance, '100.5')
      assert.equal(r.walletTransaction?.creditAmount, '100.5')
    })
    await rec.call('wallets.getWalletBalance', () => sdk.wallets.getWalletBalance(id), (r) => {
      assert.equal(r.balance, '100.5')
      assert.equal(r.creditBalance, '100.5')
    })
    await rec.call('wallets.getWalletTransactions', () => sdk.wallets.getWalletTransactions({ idPathParameter: id }), (r) => assert.equal(r.items?.[0]?.creditAmount, '100.5'))
    await rec.call('wallets.queryWallet', () => sdk.wallets.queryWallet({ walletIds: [id] }), (r) => assert.deepEqual(r.items?.map((x) => x.id), [id]))
    await rec.call('wallets.queryWalletTransaction', () => sdk.wallets.queryWalletTransaction({}), (r) => {
      assert.equal(r.items?.length, 1)
      assert.equal(r.items?.[0]?.creditAmount, '100.5')
      assert.equal(r.items?.[0]?.transactionReason, 'PURCHASED')
    })
    await rec.call('wallets.getWalletsByCustomerId', () => sdk.wallets.getWalletsByCustomerId(customerId), (r) => assert.deepEqual(r.map((x) => x.id), [id]))
    await rec.call('wallets.getCustomerWallets', () => sdk.wallets.getCustomerWallets({ id: customerId }), (r) => assert.deepEqual(r.map((x) => x.id), [id]))
    await rec.call('wallets.updateWallet', () => sdk.wallets.updateWallet(id, { name: 'Main wallet' }), (r) => assert.equal(r.name, 'Main wallet'))
    await rec.call('wallets.terminateWallet', () => sdk.wallets.terminateWallet(id), async () => assert.equal((await sdk.wallets.getWallet(id)).walletStatus, 'closed'))
  })
}
