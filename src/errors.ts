/**
 * The error vocabulary of the service, free of any transport: the domain, signaling and the HTTP
 * edge all throw `DomainError`s built by the named factories below, one or more per code of the
 * contract's closed `ErrorCode` (generated from spec/openapi.yaml). What a code means on the wire
 * is each transport's own table: src/http/error-status.ts gives the HTTP status and headers.
 *
 * Imports nothing but the generated codes, so that every layer may import it.
 */
import type { ErrorCode } from '../generated/error-codes.js';

export type { ErrorCode };

export interface FieldError {
  field?: string;
  code: string;
  message?: string;
}

/** What the caller must present before another attempt may succeed (HTTP: `WWW-Authenticate`). */
export type AuthChallenge =
  /** No credentials were presented at all. */
  | { kind: 'credentials_missing' }
  /** The presented token was refused; `description` says why, for the client. */
  | { kind: 'invalid_token'; description: string }
  | { kind: 'room_password' };

export interface ErrorDetails {
  /** Per field (validation) or per dependency (readiness): what was wrong with each. */
  errors?: FieldError[];
  /** When another attempt may succeed, for refusals by a rate limit or a cap. */
  retryAfterSeconds?: number;
  challenge?: AuthChallenge;
  cause?: unknown;
}

/**
 * Which backing service, if any, an error says cannot be reached (the transports answer it as
 * unavailable, and the client retries): the database and Redis each recognise their own failures,
 * so the composition root, which has both, builds this and hands it to each transport.
 */
export type Unreachable = (err: unknown) => 'database' | 'redis' | undefined;

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly errors?: FieldError[];
  readonly retryAfterSeconds?: number;
  readonly challenge?: AuthChallenge;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'DomainError';
    this.code = code;
    this.errors = details.errors;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.challenge = details.challenge;
  }
}

/** Named factories: call sites read as sentences, and each code's message is written here, once. */
export const errors = {
  validationFailed: (errors: FieldError[], message = 'Some provided values are invalid') => new DomainError('validation_failed', message, { errors }),
  invalidJson: (message = 'The request body is not valid JSON') => new DomainError('invalid_json', message),
  invalidContentType: () => new DomainError('invalid_content_type', 'The request body must be sent as application/json'),
  payloadTooLarge: (limit: string) => new DomainError('payload_too_large', `The request body exceeds the limit of ${limit}`),
  invalidIdToken: (message = 'The provided id token is invalid') => new DomainError('invalid_id_token', message),
  queryTooShort: (minLength: number) => new DomainError('query_too_short', `The query must have at least ${minLength} characters`),
  displayNameChangeForbidden: () => new DomainError('display_name_change_forbidden', 'Changing the display name is prohibited'),
  invalidEvent: (message: string) => new DomainError('invalid_event', message),
  sharedFolderNotConfigured: () => new DomainError('shared_folder_not_configured', 'No shared folder storage is configured for this server'),
  /** The feed's URL needs a host name, and neither `[http] public_url` nor the request's `Host` gives one. */
  invalidHost: () => new DomainError('invalid_host', 'The Host header is not a host name; set [http] public_url'),
  webhookUrlRefused: (refusal: string) => new DomainError('webhook_url_refused', `This URL cannot receive webhooks: ${refusal}`),
  invalidBreakoutRoomId: () => new DomainError('invalid_breakout_room_id', 'This room has no breakout rooms'),
  sessionRunning: () => new DomainError('session_running', 'The session of the given resumption token is still running'),
  invalidCredentials: () => new DomainError('invalid_credentials', 'The given call-in id and pin combination is not valid'),
  unauthorized: (message = 'Authentication failed', description = 'The provided access token is invalid') =>
    new DomainError('unauthorized', message, { challenge: { kind: 'invalid_token', description } }),
  missingAuthorization: () => new DomainError('unauthorized', 'This operation needs an Authorization header', { challenge: { kind: 'credentials_missing' } }),
  unknownUser: () =>
    new DomainError('unknown_user', 'Unknown subject in access token. Please login first!', {
      challenge: { kind: 'invalid_token', description: 'The user has not logged in' },
    }),
  /** A refusal names the credential wanted (as every 401 here, RFC 9110 §15.5.2): the room's password. */
  wrongRoomPassword: () => new DomainError('wrong_room_password', 'The room password is missing or wrong', { challenge: { kind: 'room_password' } }),
  notFound: (message = 'A requested resource could not be found') => new DomainError('not_found', message),
  routeNotFound: (method: string, path: string) => new DomainError('not_found', `No operation answers ${method} ${path}`),
  methodNotAllowed: (method: string, path: string) => new DomainError('method_not_allowed', `${path} does not accept ${method}`),
  unknownEmail: () => new DomainError('unknown_email', 'Only e-mail addresses of registered users can be invited'),
  webhookSubscriptionLimit: (max: number) => new DomainError('webhook_subscription_limit', `A user may hold at most ${max} webhook subscriptions`),
  storageExceeded: (quota: number) => new DomainError('storage_exceeded', `Storing this file would exceed the tariff's storage quota of ${quota} bytes`),
  tooManyRequests: (retryAfterSeconds: number) =>
    new DomainError('too_many_requests', `Too many attempts; retry in ${retryAfterSeconds} s`, { retryAfterSeconds }),
  /** A signaling ticket cap (`[signaling_caps]`) is reached; the window ends in `retryAfterSeconds`. */
  tooManyTickets: (retryAfterSeconds: number) =>
    new DomainError('too_many_tickets', `Too many signaling tickets; retry in ${retryAfterSeconds} s`, { retryAfterSeconds }),
  internal: (cause?: unknown) => new DomainError('internal_server_error', 'An internal server error occurred', { cause }),
  /** `GET /turn` with no `[turn]` server configured: the interface's 500 (§7). */
  turnNotConfigured: () => new DomainError('turn_not_configured', 'No TURN server is configured'),
  notImplemented: (operationId: string) => new DomainError('not_implemented', `The operation ${operationId} is not implemented yet`),
  /** `failed`: which backing services failed (the readiness probe names them). */
  serviceUnavailable: (message = 'A backing service is unavailable; try again shortly', failed?: FieldError[]) =>
    new DomainError('service_unavailable', message, { errors: failed }),
  /** The OIDC issuer's discovery document or JWKS could not be fetched: not the token's fault. */
  identityProviderUnavailable: (cause?: unknown) =>
    new DomainError('identity_provider_unavailable', 'The identity provider cannot be reached; try again shortly', { cause }),
  /** The identity provider's user directory (Keycloak admin API) failed to answer a search. */
  identityDirectoryUnavailable: (cause?: unknown) =>
    new DomainError('identity_directory_unavailable', 'The user directory cannot be searched right now; try again shortly', {
      cause,
    }),
};

/** Every code links to its entry in the rendered API reference (`/docs`), whichever transport carries it. */
export function documentationUrl(code: string): string {
  return `/docs#error-${code}`;
}
