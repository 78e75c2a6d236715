/**
 * The `/signaling` handshake as pure functions (docs/architecture.md §6): which
 * protocol and which ticket a `Sec-WebSocket-Protocol` header offers, and the error bodies of every
 * rejection, answered as plain HTTP before the upgrade. Redeeming the ticket is the server's part.
 */
import type { ErrorBody } from '../../generated/signaling/types.js';
import { TOKEN_LENGTH } from '../domain/tickets/random-token.js';
import { documentationUrl, errors, type DomainError, type ErrorCode } from '../errors.js';

export type HandshakeErrorCode = ErrorBody['code'];

/** A rejection before the upgrade: the HTTP status and the error body (the HTTP API's shape). */
export interface HandshakeError {
  status: number;
  body: Omit<ErrorBody, 'code'> & { code: HandshakeErrorCode | ErrorCode };
}

export type HandshakeOffer = { ok: true; protocol: string; ticket: string } | { ok: false; error: HandshakeError };

const TICKET_PREFIX = 'ticket#';
/** What the start operations issue (src/domain/tickets/random-token.ts); anything else is never in the store. */
const TICKET_SHAPE = new RegExp(`^[A-Za-z0-9]{${TOKEN_LENGTH}}$`);
const NEW_TICKET_HINT = 'Please request a new ticket from /v1/rooms/<room_id>/start';

function rejection(status: number, code: HandshakeErrorCode, message: string): HandshakeError {
  return { status, body: { code, message, documentation_url: '/docs#signaling', status: String(status) } };
}

/** Where the opening is refused as the HTTP API would refuse the request: its code, and that code's entry in /docs. */
function apiRejection(status: number, error: DomainError): HandshakeError {
  return { status, body: { code: error.code, message: error.message, documentation_url: documentationUrl(error.code), status: String(status) } };
}

export const handshakeErrors = {
  /** An upgrade request for another path than /signaling: no operation answers it. */
  routeNotFound: (method: string, path: string) => apiRejection(404, errors.routeNotFound(method, path)),
  /** The instance is shutting down (another instance may take the client). */
  shuttingDown: () => apiRejection(503, errors.serviceUnavailable('The server is shutting down')),
  missingProtocol: () => rejection(400, 'missing_protocol', 'The Sec-WebSocket-Protocol header names no protocol'),
  invalidProtocol: (accepted: readonly string[]) =>
    rejection(400, 'invalid_protocol', `None of the offered protocols is accepted; accepted are: ${accepted.join(', ')}`),
  missingTicket: () => rejection(401, 'missing_ticket', `Missing ticket. ${NEW_TICKET_HINT}`),
  invalidTicket: () => rejection(401, 'invalid_ticket', `Invalid or expired ticket. ${NEW_TICKET_HINT}`),
  /** Not a WebSocket opening: another method than GET, or the upgrade headers are missing or wrong. */
  invalidUpgrade: (message: string) => rejection(400, 'invalid_upgrade', message),
  /** A cap on open sockets (`[signaling_caps]`) of the ticket's user, invite code or the client's address is reached. */
  tooManyConnections: (limit: number) => rejection(429, 'too_many_connections', `Too many open signaling sockets (at most ${limit}); close one first`),
  internal: () => rejection(500, 'internal_server_error', 'An internal server error occurred'),
  /** The database or Redis does not answer: not the client's fault, and worth another start once it is back. */
  unavailable: () => rejection(503, 'service_unavailable', `A backing service does not answer; try again shortly. ${NEW_TICKET_HINT}`),
};

/**
 * Reads the protocol and the ticket from the `Sec-WebSocket-Protocol` header(s): entries split on
 * `,` and trimmed, in any order, over one header or several. The entry starting `ticket#` carries
 * the ticket (everything after the first `#`); the protocol is the first of the client's other
 * entries that the server accepts. Checked in this order: protocol, then ticket.
 */
export function parseHandshake(header: string | readonly string[] | undefined, accepted: readonly string[]): HandshakeOffer {
  const entries = (typeof header === 'string' ? [header] : (header ?? []))
    .flatMap((value) => value.split(','))
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  const ticketEntry = entries.find((entry) => entry.startsWith(TICKET_PREFIX));
  const offered = entries.filter((entry) => !entry.startsWith(TICKET_PREFIX));

  if (offered.length === 0) return { ok: false, error: handshakeErrors.missingProtocol() };
  const protocol = offered.find((name) => accepted.includes(name));
  if (protocol === undefined) return { ok: false, error: handshakeErrors.invalidProtocol(accepted) };
  if (ticketEntry === undefined) return { ok: false, error: handshakeErrors.missingTicket() };
  const ticket = ticketEntry.slice(TICKET_PREFIX.length);
  if (!TICKET_SHAPE.test(ticket)) return { ok: false, error: handshakeErrors.invalidTicket() };
  return { ok: true, protocol, ticket };
}

/** ws's own key check (RFC 6455 §4.2.1: 16 bytes in base64). */
const WEBSOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/;

/**
 * Whether a request is a WebSocket opening at all, checked before the ticket is taken so that a
 * request ws would refuse does not use it up. Undefined when it is one.
 */
export function checkUpgradeRequest(request: { method?: string; headers: Record<string, string | string[] | undefined> }): HandshakeError | undefined {
  const { headers } = request;
  if (request.method !== 'GET') return handshakeErrors.invalidUpgrade('The WebSocket opening must be a GET request');
  if (typeof headers.upgrade !== 'string' || headers.upgrade.toLowerCase() !== 'websocket') {
    return handshakeErrors.invalidUpgrade('The Upgrade header must be "websocket"');
  }
  const key = headers['sec-websocket-key'];
  if (typeof key !== 'string' || !WEBSOCKET_KEY.test(key)) {
    return handshakeErrors.invalidUpgrade('Missing or invalid Sec-WebSocket-Key header');
  }
  const version = headers['sec-websocket-version'];
  if (version !== '13' && version !== '8') {
    return handshakeErrors.invalidUpgrade('Missing or invalid Sec-WebSocket-Version header (13 expected)');
  }
  return undefined;
}
