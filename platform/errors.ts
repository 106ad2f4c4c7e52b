// Typed domain errors, mapped to the spec's ErrorResponse in one place (http.ts).
export const ERROR_CODES = [
  'http_client_error', 'system_error', 'internal_error', 'not_found', 'already_exists', 'version_conflict',
  'validation_error', 'invalid_operation', 'permission_denied', 'database_error', 'service_unavailable', 'too_many_requests',
] as const

export type ErrorCode = (typeof ERROR_CODES)[number]

export interface ErrorResponse {
  code: ErrorCode
  http_status_code: number
  message: string
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly httpStatus: number,
    message: string,
  ) {
    super(message)
    this.name = new.target.name
  }

  toResponse(): ErrorResponse {
    return { code: this.code, http_status_code: this.httpStatus, message: this.message }
  }
}

export class ValidationError extends DomainError {
  constructor(message: string, readonly field?: string) {
    super('validation_error', 400, message)
  }
}

export class NotFoundError extends DomainError {
  constructor(entity: string, id?: string) {
    super('not_found', 404, id === undefined ? `${entity} not found` : `${entity} ${id} not found`)
  }
}

export class AlreadyExistsError extends DomainError {
  constructor(message: string) {
    super('already_exists', 409, message)
  }
}

export class VersionConflictError extends DomainError {
  constructor(message: string) {
    super('version_conflict', 409, message)
  }
}

export class InvalidOperationError extends DomainError {
  constructor(message: string) {
    super('invalid_operation', 400, message)
  }
}

/** Missing or unknown credentials (401) and forbidden operations (403). */
export class PermissionDeniedError extends DomainError {
  constructor(message: string, status: 401 | 403 = 403) {
    super('permission_denied', status, message)
  }
}

/** Over a request rate limit (429); Retry-After says when the window ends. */
export class TooManyRequestsError extends DomainError {
  constructor(message: string, readonly retryAfterSeconds: number) {
    super('too_many_requests', 429, message)
  }
}

export class ServiceUnavailableError extends DomainError {
  /** sent as the Retry-After header when set */
  constructor(message: string, readonly retryAfterSeconds?: number) {
    super('service_unavailable', 503, message)
  }
}
