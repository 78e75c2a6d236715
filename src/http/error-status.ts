/**
 * What each error code is in HTTP: its status, the one table of it (test/contract/error-codes.test.ts
 * checks it against the contract's table of error codes). The headers come from the error's neutral
 * details: its auth challenge (`WWW-Authenticate`) and when to retry (`Retry-After`).
 */
import type { AuthChallenge, DomainError, ErrorCode } from '../errors.js';

export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  validation_failed: 400,
  invalid_json: 400,
  invalid_id_token: 400,
  query_too_short: 400,
  display_name_change_forbidden: 400,
  invalid_event: 400,
  shared_folder_not_configured: 400,
  invalid_host: 400,
  webhook_url_refused: 400,
  invalid_breakout_room_id: 400,
  session_running: 400,
  invalid_credentials: 400,
  unauthorized: 401,
  unknown_user: 401,
  wrong_room_password: 401,
  not_found: 404,
  method_not_allowed: 405,
  unknown_email: 409,
  webhook_subscription_limit: 409,
  payload_too_large: 413,
  storage_exceeded: 413,
  invalid_content_type: 415,
  too_many_requests: 429,
  too_many_tickets: 429,
  internal_server_error: 500,
  turn_not_configured: 500,
  not_implemented: 501,
  service_unavailable: 503,
  identity_provider_unavailable: 503,
  identity_directory_unavailable: 503,
};

const bearerChallenge = (error: string, description: string) => `Bearer error="${error}", error_description="${description}"`;

function wwwAuthenticate(challenge: AuthChallenge): string {
  switch (challenge.kind) {
    case 'credentials_missing':
      return 'Bearer';
    case 'invalid_token':
      return bearerChallenge('invalid_token', challenge.description);
    case 'room_password':
      return 'RoomPassword';
  }
}

/** The response headers an error carries; none for most. */
export function httpHeaders(error: DomainError): Record<string, string> {
  const headers: Record<string, string> = {};
  if (error.challenge) headers['www-authenticate'] = wwwAuthenticate(error.challenge);
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
  return headers;
}
