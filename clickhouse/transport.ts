// How statements reach ClickHouse, whatever carries them: HTTP, the embedded engine, or another
// thread's transport.

export type QueryParams = Record<string, unknown>
export type Settings = Record<string, string>

/** How statements reach the engine: the client (HTTP or chDB) or another thread's client. */
export interface ClickHouseTransport {
  command(query: string, params?: QueryParams, settings?: Settings): Promise<void>
  queryJson(query: string, params?: QueryParams, settings?: Settings): Promise<unknown[]>
  queryText(query: string, settings?: Settings): Promise<string>
  /** `body`: rows already formatted as JSONCompactEachRow lines; `queryId` names it for `settle` */
  insert(table: string, body: Uint8Array, settings?: Settings, queryId?: string): Promise<void>
  /**
   * After a statement failed for its caller: returns once the statement named `queryId` can no
   * longer change anything (finished, or killed). A remote server may still be running an insert
   * whose connection broke or timed out, and commit it afterwards.
   */
  settle(queryId: string): Promise<void>
  ping(): Promise<boolean>
  close(): Promise<void>
}
