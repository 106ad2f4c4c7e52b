// Deletions through the SDK, last: each record made by an earlier step, then read back gone.
import assert from 'node:assert/strict'
import type { Scenario } from './context.js'

interface Deletion {
  op: string
  id: string
  run: (id: string) => Promise<unknown>
  /** our route that reads the record back */
  readBack: (id: string) => string
  /** what the SDK returned: `{message}` naming the record unless said otherwise */
  answered?: (result: unknown, id: string) => void
}

const saysDeleted = (result: unknown, id: string) => assert.equal((result as { message?: string } | undefined)?.message, `${id} deleted`)
const noBody = (result: unknown) => assert.equal(result, undefined)

export async function deletions(s: Scenario): Promise<void> {
  const { sdk, rec, ids } = s
  const steps: Deletion[] = [
    { op: 'payments.deletePayment', id: 'payment', run: (id) => sdk.payments.deletePayment(id), readBack: (id) => `/v1/payments/${id}`, answered: noBody },
    { op: 'entityIntegrationMappings.deleteEntityIntegrationMapping', id: 'mapping', run: (id) => sdk.entityIntegrationMappings.deleteEntityIntegrationMapping(id), readBack: (id) => `/v1/entity-integration-mappings/${id}`, answered: noBody },
    { op: 'integrations.deleteIntegration', id: 'integration', run: (id) => sdk.integrations.deleteIntegration(id), readBack: (id) => `/v1/integrations/connections/${id}`, answered: noBody },
    { op: 'taxAssociations.deleteTaxAssociation', id: 'taxAssociation', run: (id) => sdk.taxAssociations.deleteTaxAssociation(id), readBack: (id) => `/v1/taxes/associations/${id}`,
      answered: (r, id) => assert.deepEqual([(r as { id?: string }).id, (r as { status?: string }).status], [id, 'deleted']) },
    { op: 'taxRates.deleteTaxRate', id: 'taxRate', run: (id) => sdk.taxRates.deleteTaxRate(id), readBack: (id) => `/v1/taxes/rates/${id}`, answered: noBody },
    { op: 'coupons.deleteCoupon', id: 'coupon', run: (id) => sdk.coupons.deleteCoupon(id), readBack: (id) => `/v1/coupons/${id}` },
    { op: 'creditGrants.deleteCreditGrant', id: 'creditGrant', run: (id) => sdk.creditGrants.deleteCreditGrant(id), readBack: (id) => `/v1/creditgrants/${id}` },
    { op: 'entitlements.deleteEntitlement', id: 'entitlement', run: (id) => sdk.entitlements.deleteEntitlement(id), readBack: (id) => `/v1/entitlements/${id}` },
    { op: 'addons.deleteAddon', id: 'addon', run: (id) => sdk.addons.deleteAddon(id), readBack: (id) => `/v1/addons/${id}` },
    { op: 'prices.deletePrice', id: 'feePrice', run: (id) => sdk.prices.deletePrice(id, {}), readBack: (id) => `/v1/prices/${id}` },
    { op: 'plans.deletePlan', id: 'plan', run: (id) => sdk.plans.deletePlan(id), readBack: (id) => `/v1/plans/${id}` },
    { op: 'features.deleteFeature', id: 'booleanFeature', run: (id) => sdk.features.deleteFeature(id), readBack: (id) => `/v1/features/${id}` },
    { op: 'secrets.deleteApiKey', id: 'apiKey', run: (id) => sdk.secrets.deleteApiKey(id), readBack: () => '/v1/secrets/api/keys', answered: noBody },
  ]
  for (const step of steps) {
    const id = ids[step.id]
    if (!id) {
      rec.skip(step.op, step.id)
      continue
    }
    await rec.call(step.op, () => step.run(id), async (result) => {
      ;(step.answered ?? saysDeleted)(result, id)
      const after = await s.api.get(step.readBack(id))
      const archived = after.status === 404 || after.body?.status === 'archived' || after.body?.status === 'deleted'
        || (Array.isArray(after.body?.items) && !after.body.items.some((k: { id: string; status?: string }) => k.id === id && k.status !== 'archived'))
      assert.ok(archived, `${step.op}: still there (${after.status} ${JSON.stringify(after.body).slice(0, 120)})`)
    })
  }
}
