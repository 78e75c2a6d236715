/**
 * The one error type of the service. Domain code throws `AppError`s built by the named factories
 * below; `renderError` turns them into the error body of docs/architecture.md §4 at the edge. Signaling uses
 * the same codes in its `error` events.
 */

export interface FieldError {
  field?: string;
  code: string;
  message?: string;
}

export interface ErrorBody {
  code: string;
  message: string;
  documentation_url: string;
  status: string;
  errors?: FieldError[];
}

export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly errors?: FieldError[];
  readonly headers?: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { errors?: FieldError[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    this.errors = options.errors;
    this.headers = options.headers;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = {
      code: this.code,
      message: this.message,
      documentation_url: documentationUrl(this.code),
      status: String(this.status),
    };
    if (this.errors) body.errors = this.errors;
    return body;
  }
}

/** Every error code links to its entry in the rendered API reference. */
function documentationUrl(code: string): string {
  return `/docs#error-${code}`;
}

const bearerChallenge = (error: string, description: string) =>
  `Bearer error="${error}", error_description="${description}"`;

/** Named factories: call sites read as sentences and each status is decided here, once. */
export const errors = {
  validationFailed: (errors: FieldError[], message = 'Some provided values are invalid') =>
    new AppError(400, 'validation_failed', message, { errors }),
  badRequest: (code: string, message: string) => new AppError(400, code, message),
  invalidJson: (message = 'The request body is not valid JSON') => new AppError(400, 'invalid_json', message),
  invalidContentType: () =>
    new AppError(415, 'invalid_content_type', 'The request body must be sent as application/json'),
  payloadTooLarge: (limit: string) =>
    new AppError(413, 'payload_too_large', `The request body exceeds the limit of ${limit}`),
  invalidIdToken: (message = 'The provided id token is invalid') => new AppError(400, 'invalid_id_token', message),
  unauthorized: (message = 'Authentication failed', description = 'The provided access token is invalid') =>
    new AppError(401, 'unauthorized', message, {
      headers: { 'www-authenticate': bearerChallenge('invalid_token', description) },
    }),
  missingAuthorization: () =>
    new AppError(401, 'unauthorized', 'This operation needs an Authorization header', {
      headers: { 'www-authenticate': 'Bearer' },
    }),
  unknownUser: () =>
    new AppError(401, 'unknown_user', 'Unknown subject in access token. Please login first!', {
      headers: { 'www-authenticate': bearerChallenge('invalid_token', 'The user has not logged in') },
    }),
  notFound: (message = 'A requested resource could not be found') => new AppError(404, 'not_found', message),
  routeNotFound: (method: string, path: string) =>
    new AppError(404, 'not_found', `No operation answers ${method} ${path}`),
  methodNotAllowed: (method: string, path: string) =>
    new AppError(405, 'method_not_allowed', `${path} does not accept ${method}`),
  conflict: (code: string, message: string) => new AppError(409, code, message),
  tooManyRequests: (retryAfterSeconds: number) =>
    new AppError(429, 'too_many_requests', `Too many attempts; retry in ${retryAfterSeconds} s`, {
      headers: { 'retry-after': String(retryAfterSeconds) },
    }),
  /** A signaling ticket cap (`[signaling_caps]`) is reached; the window ends in `retryAfterSeconds`. */
  tooManyTickets: (retryAfterSeconds: number) =>
    new AppError(429, 'too_many_tickets', `Too many signaling tickets; retry in ${retryAfterSeconds} s`, {
      headers: { 'retry-after': String(retryAfterSeconds) },
    }),
  internal: (cause?: unknown) =>
    new AppError(500, 'internal_server_error', 'An internal server error occurred', { cause }),
  /** `GET /turn` with no `[turn]` server configured: the interface's 500 (§7). */
  turnNotConfigured: () => new AppError(500, 'turn_not_configured', 'No TURN server is configured'),
  notImplemented: (operationId: string) =>
    new AppError(501, 'not_implemented', `The operation ${operationId} is not implemented yet`),
  /** `failed`: which backing services failed (the readiness probe names them). */
  serviceUnavailable: (message = 'A backing service is unavailable; try again shortly', failed?: FieldError[]) =>
    new AppError(503, 'service_unavailable', message, { errors: failed }),
  /** The OIDC issuer's discovery document or JWKS could not be fetched: not the token's fault. */
  identityProviderUnavailable: (cause?: unknown) =>
    new AppError(503, 'identity_provider_unavailable', 'The identity provider cannot be reached; try again shortly', {
      cause,
    }),
  /** The identity provider's user directory (Keycloak admin API) failed to answer a search. */
  identityDirectoryUnavailable: (cause?: unknown) =>
    new AppError(503, 'identity_directory_unavailable', 'The user directory cannot be searched right now; try again shortly', {
      cause,
    }),
};
