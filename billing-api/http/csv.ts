// RFC 4180 CSV, the one place CSV is written. Pure: rows in, text out.
//
// - Fields containing a comma, a double quote, CR or LF are quoted; quotes inside are doubled.
// - Records end with CRLF (the last one too).
// - Spreadsheet formula injection (OWASP "CSV injection"): a field that starts with =, +, -, @,
//   a tab or a CR and is not a plain number ("-12.50" stays as is) gets a leading single quote,
//   so Excel / Sheets / LibreOffice show it as text instead of evaluating it. Readers that want
//   the original value strip that one quote. Money strings and ISO dates never start with these
//   characters except negative amounts, which are plain numbers and are left alone.

export type CsvValue = string | number | bigint | boolean | Date | null | undefined

const PLAIN_NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/
const FORMULA_START = /^[=+\-@\t\r]/
const NEEDS_QUOTES = /[",\r\n]/

/** One field, escaped. null and undefined are empty; dates are ISO 8601. */
export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return ''
  let text = value instanceof Date ? value.toISOString() : String(value)
  if (FORMULA_START.test(text) && !PLAIN_NUMBER.test(text)) text = `'${text}`
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** One record, CRLF-terminated. */
export function csvRecord(values: readonly CsvValue[]): string {
  return values.map(csvField).join(',') + '\r\n'
}

/** A whole document: the header record, then one record per row. */
export function toCsv(header: readonly string[], rows: Iterable<readonly CsvValue[]>): string {
  let out = csvRecord(header)
  for (const row of rows) out += csvRecord(row)
  return out
}

/**
 * A document as it is produced: the header record, then one chunk per page of rows. Pages are
 * pulled one at a time (an async generator waits for its reader), so memory holds one page
 * whatever the document's size.
 */
export async function* csvChunks(header: readonly string[], pages: AsyncIterable<readonly (readonly CsvValue[])[]>): AsyncGenerator<string> {
  yield csvRecord(header)
  for await (const page of pages) {
    let chunk = ''
    for (const row of page) chunk += csvRecord(row)
    if (chunk) yield chunk
  }
}
