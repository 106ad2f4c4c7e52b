// The admin API over HTTP (billing-api/admin/routes.ts), typed for the CLI.
import type { FailureView, JobView, QueueStatus, ScheduledJob } from '../../billing-api/admin/index.js'
import type { AggregatorView } from '../../billing-api/admin/aggregators.js'
import type { BillingRunView } from '../../billing-api/billing/index.js'
import type { AdminTarget } from './target.js'

export class AdminApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message)
  }
}

export interface CreatedTenantView {
  tenant_id: string
  environments: { production: string; development: string }
  user_id: string
  api_key: string
}

export type { AggregatorView, BillingRunView, FailureView, JobView, QueueStatus, ScheduledJob }

export class AdminClient {
  constructor(private readonly target: AdminTarget) {}

  private async request<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: object, timeoutMs = 30_000): Promise<T> {
    if (!this.target.token) {
      throw new AdminApiError(401, 'permission_denied', `no admin token: set ADMIN_TOKEN (npm run up writes the local one to ${this.target.dataDir}/admin-token)`)
    }
    const headers: Record<string, string> = { authorization: `Bearer ${this.target.token}` }
    if (body) headers['content-type'] = 'application/json'
    let res: Response
    try {
      res = await fetch(`${this.target.url}/v1/admin${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined, signal: AbortSignal.timeout(timeoutMs) })
    } catch (err) {
      throw new AdminApiError(0, 'unreachable', `${this.target.url} does not answer (${(err as Error).message})`)
    }
    const text = await res.text()
    let parsed: unknown
    try {
      parsed = text ? JSON.parse(text) : null
    } catch {
      parsed = text
    }
    if (!res.ok) {
      const e = (parsed ?? {}) as { code?: string; message?: string }
      throw new AdminApiError(res.status, e.code ?? 'http_error', e.message ?? `HTTP ${res.status}`)
    }
    return parsed as T
  }

  async jobs(): Promise<ScheduledJob[]> {
    return (await this.request<{ items: ScheduledJob[] }>('GET', '/jobs')).items
  }

  runJob(name: string, tenantId?: string): Promise<JobView> {
    return this.request('POST', `/jobs/${encodeURIComponent(name)}/runs`, tenantId ? { tenant_id: tenantId } : {})
  }

  /** a billing run's progress record; undefined while the job has not opened it yet */
  async billingRun(id: string): Promise<BillingRunView | undefined> {
    try {
      return await this.request<BillingRunView>('GET', `/billing-runs/${encodeURIComponent(id)}`)
    } catch (err) {
      if (err instanceof AdminApiError && err.status === 404) return undefined
      throw err
    }
  }

  job(queue: string, id: string): Promise<JobView> {
    return this.request('GET', `/queues/${encodeURIComponent(queue)}/jobs/${encodeURIComponent(id)}`)
  }

  async queues(failures: number): Promise<QueueStatus[]> {
    return (await this.request<{ items: QueueStatus[] }>('GET', `/queues?failures=${failures}`)).items
  }

  queue(name: string, failures: number): Promise<QueueStatus> {
    return this.request('GET', `/queues/${encodeURIComponent(name)}?failures=${failures}`)
  }

  retry(queue: string, id: string): Promise<JobView> {
    return this.request('POST', `/queues/${encodeURIComponent(queue)}/jobs/${encodeURIComponent(id)}/retry`, {})
  }

  retryFailed(queue: string): Promise<{ queue: string; retried: number }> {
    return this.request('POST', `/queues/${encodeURIComponent(queue)}/retry-failed`, {})
  }

  async aggregators(): Promise<AggregatorView[]> {
    return (await this.request<{ items: AggregatorView[] }>('GET', '/aggregators')).items
  }

  /** starting processes one after another takes a while: the API waits up to 90 s */
  async setAggregators(n: number): Promise<AggregatorView[]> {
    return (await this.request<{ items: AggregatorView[] }>('PUT', '/aggregators', { consumers: n }, 120_000)).items
  }

  createTenant(name: string, keyEnvironment: 'production' | 'development' = 'production'): Promise<CreatedTenantView> {
    return this.request('POST', '/tenants', { name, key_environment: keyEnvironment })
  }
}
