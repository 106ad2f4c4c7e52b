// Bounded label values for per-tenant and per-meter metrics. Prometheus keeps one series per
// label combination, so raw tenant and meter ids would grow without bound. Instead:
// - a tenant on METRICS_TENANT_ALLOWLIST is labelled by its id;
// - every other tenant is hashed (FNV-1a) into one of METRICS_TENANT_BUCKETS labels
//   "other_00".."other_NN" (or a single "other" when 0): a noisy tenant shows as a hot
//   bucket, and an operator who finds it adds its id to the allow-list;
// - meters are labelled by id for allow-listed tenants only, the first METRICS_METERS_PER_TENANT
//   seen by the process; later ones, and all meters of other tenants, are "other".
// Series per metric: at most (allow-list x (meters + 1)) + buckets.
import type { MetricLabelConfig } from './config.js'

export const OTHER = 'other'

export class MetricLabels {
  private readonly allow: Set<string>
  private readonly meters = new Map<string, Set<string>>()

  constructor(private readonly config: MetricLabelConfig) {
    this.allow = new Set(config.tenantAllowlist)
  }

  tenant(tenantId: string): string {
    if (this.allow.has(tenantId)) return tenantId
    const n = this.config.tenantBuckets
    if (n === 0) return OTHER
    return `${OTHER}_${String(fnv1a(tenantId) % n).padStart(2, '0')}`
  }

  meter(tenantId: string, meterId: string): string {
    if (!this.allow.has(tenantId)) return OTHER
    let seen = this.meters.get(tenantId)
    if (!seen) this.meters.set(tenantId, (seen = new Set()))
    if (seen.has(meterId)) return meterId
    if (seen.size >= this.config.metersPerTenant) return OTHER
    seen.add(meterId)
    return meterId
  }
}

/** 32-bit FNV-1a over UTF-16 code units: stable across processes and restarts. */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

let current = new MetricLabels({ tenantAllowlist: [], tenantBuckets: 8, metersPerTenant: 20 })

/** Set once at start-up from the configuration (scripts/platform.ts). */
export function configureMetricLabels(config: MetricLabelConfig): void {
  current = new MetricLabels(config)
}

export function metricLabels(): MetricLabels {
  return current
}
