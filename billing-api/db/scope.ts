/** What every repository query filters on: the tenant and environment of the caller's API key. */
export interface Scope {
  tenant_id: string
  environment_id: string
}
