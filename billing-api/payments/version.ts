import { VersionConflictError } from '../../platform/errors.js'
import type { Invoice } from '../invoices/invoice.entity.js'
import type { ChangeOptions } from '../invoices/index.js'

/** The caller's expected version (optimistic locking), checked after an idempotent replay had its chance. */
export function assertVersion(invoice: Invoice, opts: ChangeOptions): void {
  if (opts.version !== undefined && opts.version !== invoice.version) {
    throw new VersionConflictError(`invoice ${invoice.id} is at version ${invoice.version}, not ${opts.version}; reload and retry`)
  }
}
