/**
 * A lingering close (RFC 9112 §9.6). Convene answers some requests before their body has arrived:
 * - a body that the operation does not take is never read;
 * - a path of no operation is answered at once.
 * (A body over the size limit is read off before its 413, by body-parser.)
 *
 * When the connection then closes (the client asked for it), Node's HTTP server destroys the
 * socket as soon as the answer is written. The bytes of the body that arrive after that make the
 * kernel reset the connection. A reset discards whatever of the answer the client had not read
 * yet, so the client sees ECONNRESET instead of its answer.
 *
 * On a connection that carries a request with a body, the close becomes a half-close:
 * - a FIN follows the answer;
 * - what the client still sends is read and dropped (Node's server dumps a body nobody read);
 * - the socket is destroyed when the client closes its side, or after LINGER_MS.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** Apache's lingering close waits as long for a client to finish sending. */
export const LINGER_MS = 2_000;

/** Called where Node's HTTP server would close `this` with `destroySoon()` (after the answer of a `Connection: close`). */
function lingeringClose(this: Socket): void {
  this.end();
  const deadline = setTimeout(() => this.destroy(), LINGER_MS).unref();
  this.once('close', () => clearTimeout(deadline));
}

/** Makes the connection of `req` close lingering if the request has a body still to arrive. */
export function lingerIfBodyPending(req: IncomingMessage): void {
  if (!req.complete) req.socket.destroySoon = lingeringClose;
}
