// GET /invoices/compute-jobs/{workflow_id}: status of an asynchronous recomputation
// (POST /invoices/{id}/compute without sync=true answers 202 with the workflow_id; compute-job.ts).
import type { FastifyInstance } from 'fastify'
import { ServiceUnavailableError } from '../../platform/errors.js'
import { scopeOf } from '../auth/authenticate.js'
import type { BillingContext } from '../context.js'

const params = {
  type: 'object',
  required: ['workflow_id'],
  properties: { workflow_id: { type: 'string', minLength: 1, maxLength: 100 } },
} as const

export async function invoiceComputeRoutes(app: FastifyInstance, ctx: BillingContext): Promise<void> {
  app.get('/invoices/compute-jobs/:workflow_id', { schema: { tags: ['invoices'], params } }, async (request) => {
    if (!ctx.invoiceCompute) throw new ServiceUnavailableError('the invoice compute queue is not configured in this process')
    return ctx.invoiceCompute.status(scopeOf(request), (request.params as { workflow_id: string }).workflow_id)
  })
}
