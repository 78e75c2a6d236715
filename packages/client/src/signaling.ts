/**
 * Opening Convene's `/signaling` socket with a ticket: `connectSignaling` offers the protocol and
 * the ticket as subprotocols, as browsers must (they cannot set headers), and resolves once the
 * socket is open; `startSignaling` first gets the ticket from the room's start operation through
 * the typed HTTP client.
 *
 *   const http = createHttpClient({ baseUrl: 'http://localhost:11311/v1', token });
 *   const alice = await startSignaling(http, { url: 'http://localhost:11311', roomId });
 *   const joined = await alice.join('Alice');
 *
 * `reconnect` (in `startSignaling`) brings a dropped socket back as the same participant: see
 * signaling-reconnect.ts and `SignalingConnection.onConnectionEvent`.
 */
import type { Client } from 'openapi-fetch';
import type { paths } from '../generated/openapi.js';
import { SignalingConnection } from './signaling-connection.js';
import { SignalingStartError } from './signaling-errors.js';
import { reconnectPolicy } from './signaling-reconnect.js';
import type { FrameCheck, ReconnectOptions, WebSocketConstructor, WebSocketLike } from './signaling-types.js';

/** The subprotocol offered unless others are given (the server also accepts the reference's names). */
export const DEFAULT_SIGNALING_PROTOCOL = 'service-signaling-json-v1.0';

export interface ConnectOptions {
  /** The server (`http(s)://host` or `ws(s)://host`, `/signaling` is added) or the socket's URL itself. */
  url: string | URL;
  ticket: string;
  /** The protocol name(s) to offer; default `service-signaling-json-v1.0`. */
  protocol?: string | string[];
  /** The WebSocket class: the global one by default (browsers, Node 24); the `ws` package's also reads refusals. */
  WebSocket?: WebSocketConstructor;
  /**
   * Check every received frame against the contract (generated ajv validators, loaded only when
   * asked, so a bundle that never validates does not carry them). A frame that breaks it closes the
   * socket and fails every wait with a `SignalingProtocolError`.
   */
  validate?: boolean;
}

/** The socket URL for a server's base URL: ws(s) for http(s), `/signaling` appended unless it is there. */
export function signalingUrl(base: string | URL): string {
  const url = new URL(base, (globalThis as { location?: { href: string } }).location?.href);
  const schemes: Record<string, string> = { 'http:': 'ws:', 'ws:': 'ws:', 'https:': 'wss:', 'wss:': 'wss:' };
  const scheme = schemes[url.protocol];
  if (!scheme) throw new TypeError(`not a server URL: ${url.href} (http, https, ws or wss)`);
  url.protocol = scheme;
  url.hash = '';
  if (!url.pathname.endsWith('/signaling')) url.pathname = `${url.pathname.replace(/\/+$/, '')}/signaling`;
  return url.href;
}

/** The WebSocket class to use: the one given, else the global one; none at all throws a TypeError. */
function webSocketClass(options: Pick<ConnectOptions, 'WebSocket'>): WebSocketConstructor {
  const Socket = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (!Socket) throw new TypeError("no WebSocket here: pass one (e.g. the ws package's) as `WebSocket`");
  return Socket;
}

/** The contract check of `validate`, loaded only then. */
async function frameCheck(options: Pick<ConnectOptions, 'validate'>): Promise<FrameCheck | undefined> {
  return options.validate ? (await import('./signaling-contract.js')).checkServerFrame : undefined;
}

/** A new socket (opening) with the ticket and the protocols offered. */
function openSocket(options: Omit<ConnectOptions, 'ticket' | 'WebSocket'>, Socket: WebSocketConstructor, ticket: string): WebSocketLike {
  const protocols = options.protocol === undefined ? [DEFAULT_SIGNALING_PROTOCOL] : [options.protocol].flat();
  return new Socket(signalingUrl(options.url), [...protocols, `ticket#${ticket}`]);
}

/**
 * Opens the socket with the ticket and resolves once it is open (a refusal rejects with a
 * `SignalingConnectError`). It cannot reconnect: a ticket opens one socket only (see `startSignaling`).
 */
export async function connectSignaling(options: ConnectOptions): Promise<SignalingConnection> {
  const check = await frameCheck(options);
  const connection = new SignalingConnection(openSocket(options, webSocketClass(options), options.ticket), { check });
  await connection.opened;
  return connection;
}

export interface StartOptions extends Omit<ConnectOptions, 'ticket'> {
  roomId: string;
  /** A guest's invite code: the ticket then comes from `start_invited`, which needs no token. */
  inviteCode?: string;
  /** The room's password, for anyone but its owner. */
  password?: string;
  /** The resumption token of an earlier session of this participant, to come back as the same participant. */
  resumption?: string;
  /**
   * Reconnect after a drop (off by default): `true` for the defaults, or the limits. A socket that
   * drops is replaced by starting again with the resumption token and joining again; see
   * `SignalingConnection.onConnectionEvent`.
   */
  reconnect?: boolean | ReconnectOptions;
}

/** A started session's socket, with the resumption token that lets it come back after a drop (a new one after each reconnect). */
export type StartedSignaling = SignalingConnection & { readonly resumption: string };

/**
 * Starts the room (`POST /rooms/{room_id}/start` with the HTTP client's token, or `start_invited`
 * with `inviteCode`) and opens the socket with the ticket. A refused start rejects with a
 * `SignalingStartError` carrying the status and error body. With `reconnect`, each attempt after a
 * drop starts again the same way with the latest resumption token.
 */
export async function startSignaling(http: Client<paths>, options: StartOptions): Promise<StartedSignaling> {
  const { roomId, inviteCode, password, resumption: presented, reconnect, ...connect } = options;
  // checked before the start: a ticket is good for one socket only, so failing after it would waste it
  const Socket = webSocketClass(connect);
  const policy = reconnect ? reconnectPolicy(reconnect) : undefined;
  const check = await frameCheck(connect);
  const path = { room_id: roomId };
  const start = async (resumption: string | undefined, signal?: AbortSignal) => {
    const body = { ...(password !== undefined ? { password } : {}), ...(resumption !== undefined ? { resumption } : {}) };
    const answer =
      inviteCode === undefined
        ? await http.POST('/rooms/{room_id}/start', { params: { path }, body, signal })
        : await http.POST('/rooms/{room_id}/start_invited', { params: { path }, body: { invite_code: inviteCode, ...body }, signal });
    if (!answer.data) throw new SignalingStartError(answer.response.status, answer.error);
    return answer.data;
  };
  const first = await start(presented);
  let resumption = first.resumption;
  const reopen = async (signal: AbortSignal) => {
    const answer = await start(resumption, signal);
    // the token presented is used up once resumed: only the new one can bring the participant back
    resumption = answer.resumption;
    return openSocket(connect, Socket, answer.ticket);
  };
  const connection = new SignalingConnection(openSocket(connect, Socket, first.ticket), { check, ...(policy ? { reconnect: { policy, reopen } } : {}) });
  await connection.opened;
  return Object.defineProperty(connection, 'resumption', { get: () => resumption, enumerable: true }) as StartedSignaling;
}
