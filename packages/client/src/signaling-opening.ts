/**
 * Waiting for a signaling socket to open, and saying why it did not. The server refuses an opening
 * as plain HTTP before the upgrade (401 for a missing, used, expired or foreign ticket, 400 for an
 * unknown protocol, with the error body). The WebSocket API hides that answer (the socket just
 * closes with 1006); the `ws` package alone lets a listener read it, so with it the error carries
 * the status and the error body. Nothing of Node is imported: the `ws` socket is recognised by its
 * methods.
 */
import { SignalingConnectError } from './signaling-errors.js';
import type { SignalingClose, WebSocketLike } from './signaling-types.js';

// readyState values (the same in every implementation)
export const CONNECTING = 0;
export const OPEN = 1;
export const CLOSING = 2;

/** The part of Node's IncomingMessage that reading a refusal needs. */
interface RefusedResponse {
  statusCode: number;
  setEncoding(encoding: 'utf8'): void;
  on(event: 'data', listener: (chunk: string) => void): void;
  on(event: 'end' | 'close', listener: () => void): void;
}

/** What the `ws` package's socket has beyond the WebSocket API. */
interface WsSocket {
  once(event: 'unexpected-response', listener: (request: unknown, response: RefusedResponse) => void): unknown;
  terminate(): void;
}

const isWsSocket = (socket: unknown): socket is WsSocket =>
  typeof (socket as Partial<WsSocket>).once === 'function' && typeof (socket as Partial<WsSocket>).terminate === 'function';

/**
 * Resolves when `socket` is open; rejects with a `SignalingConnectError` when it closes first.
 * `lastError`: the socket's last error message, which names causes such as ECONNREFUSED with `ws`.
 */
export function whenOpen(socket: WebSocketLike, closed: Promise<SignalingClose>, lastError: () => string | undefined): Promise<void> {
  let refusal: SignalingConnectError | undefined;
  if (socket.readyState === CONNECTING && isWsSocket(socket)) {
    // with this listener ws leaves the refused request to us: read the body, then end the socket
    socket.once('unexpected-response', (_request, response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => (refusal = refusedWith(response.statusCode, text)));
      response.on('close', () => socket.terminate());
    });
  }
  return new Promise((resolve, reject) => {
    if (socket.readyState === OPEN) return resolve();
    socket.addEventListener('open', () => resolve());
    void closed.then(({ code }) => {
      const error = lastError();
      reject(
        refusal ??
          new SignalingConnectError(
            `the socket closed (${code}${error ? `, ${error}` : ''}) before it opened: the server refused it ` +
              '(a missing, used, expired or foreign ticket, or an unknown protocol) or could not be reached; ' +
              'a WebSocket cannot read the refusal (with the ws package the client reads it)',
          ),
      );
    });
  });
}

function refusedWith(status: number, text: string): SignalingConnectError {
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not the contract's error body (a proxy's page, say): kept as text
  }
  const { code, message } = (typeof body === 'object' && body !== null ? body : {}) as { code?: unknown; message?: unknown };
  const what = typeof code === 'string' ? `${code}${typeof message === 'string' ? `: ${message}` : ''}` : text.slice(0, 200);
  return new SignalingConnectError(`the server refused the socket with HTTP ${status} ${what}`, status, body);
}
