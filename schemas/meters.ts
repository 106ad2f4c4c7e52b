// The meter contract between billing-api (where meters are defined) and the aggregator (which
// counts events for them): both import it from here, so the data path reads one way.

/** A published meter as the aggregator applies it to events. */
export interface MeterDefinition {
  id: string
  tenant_id: string
  environment_id: string
  event_name: string
  aggregation: {
    type: string
    field?: string | null
    /** arithmetic over event properties (schemas/meter-expression.ts), instead of `field` */
    expression?: string | null
    multiplier?: string | null
    group_by?: string | null
  }
  filters: { key: string; values: string[] }[]
}

/** Where the aggregator reads the published meters from (billing-api/meters/meter-definitions.ts). */
export interface MeterSource {
  /** Cheap change detector: changes whenever a meter is created, changed or archived. */
  version(): Promise<string>
  load(): Promise<MeterDefinition[]>
}
