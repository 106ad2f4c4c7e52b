// Inbound payloads arrive in snake_case (Stripe) or camelCase (other senders, SDK
// re-serialisations): every field is read under both spellings.
export type Payload = Record<string, unknown>

export const toCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())

/** The value under `snake_key` or its camelCase form. */
export function field(obj: Payload | null | undefined, snakeKey: string): unknown {
  if (!obj || typeof obj !== 'object') return undefined
  return obj[snakeKey] ?? obj[toCamel(snakeKey)]
}

/** A provider id given as a string or as an expanded object with an id. */
export function idField(obj: Payload | null | undefined, snakeKey: string): string | undefined {
  const v = field(obj, snakeKey)
  if (typeof v === 'string' && v !== '') return v
  if (v && typeof v === 'object' && typeof (v as Payload).id === 'string') return (v as Payload).id as string
  return undefined
}

/** Our own id, placed in the provider record's metadata by a push (meterline_invoice_id, ...). */
export function metadataId(obj: Payload, snakeKey: string): string | undefined {
  const meta = field(obj, 'metadata') as Payload | undefined
  const v = field(meta, snakeKey)
  return typeof v === 'string' && v !== '' ? v : undefined
}
