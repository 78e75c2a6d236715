/**
 * A lingering close (src/http/lingering-close.ts, RFC 9112 §9.6). A client asked to close the
 * connection, and Convene answered before reading the request's whole body: a body its operation
 * does not take, or a path of no operation. (A body over the limit is read off before its 413, by
 * body-parser.) The client then reads its whole answer, goes on sending that body, and the
 * connection ends with the server's FIN, not a reset. Without it, Node destroyed the socket as soon
 * as the answer was written, and the body's next bytes made the kernel reset the connection: here
 * the client's writes fail with EPIPE. A client that had not yet read its answer when the reset
 * came lost it (the hostile-input test's ECONNRESET). A client that stops sending but never
 * closes is not waited for longer than LINGER_MS.
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { LINGER_MS } from '../../../src/http/lingering-close.js';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const app = useTestApp();
let alice: TestUser;
beforeAll(async () => {
  alice = await app.login('alice');
});

const BODY_BYTES = 4 * 1024 * 1024;
const FIRST_PART = 64 * 1024;

interface Exchange {
  /** Everything the server sent, the answer's head and body. */
  received: string;
  /** The socket's error, if the connection was reset. */
  error?: NodeJS.ErrnoException;
  /** Whether the server's FIN arrived (the socket's `end`). */
  ended: boolean;
}

/** Whether `text` holds a whole HTTP answer with a Content-Length. */
function isWholeAnswer(text: string): boolean {
  const headEnd = text.indexOf('\r\n\r\n');
  const length = /\r\ncontent-length: (\d+)/i.exec(text);
  return headEnd !== -1 && length !== null && Buffer.byteLength(text.slice(headEnd + 4)) >= Number(length[1]);
}

/** Opens a half-open connection, sends `head` and the first part of a body of BODY_BYTES, and waits for the whole answer. */
async function answeredBeforeItsBody(head: string): Promise<{ socket: Socket; exchange: Exchange; closed: Promise<unknown> }> {
  const url = new URL(app.url);
  // half-open, as a client still sending is: it does not end its side when the server's FIN arrives
  const socket: Socket = connect({ port: Number(url.port), host: url.hostname, allowHalfOpen: true });
  await once(socket, 'connect');
  const exchange: Exchange = { received: '', ended: false };
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (exchange.received += chunk));
  socket.on('end', () => (exchange.ended = true));
  socket.on('error', (err: NodeJS.ErrnoException) => (exchange.error = err));
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.write(head);
  socket.write(Buffer.alloc(FIRST_PART, 0x20));
  await expect.poll(() => isWholeAnswer(exchange.received) || exchange.error !== undefined).toBe(true);
  return { socket, exchange, closed };
}

/** As `answeredBeforeItsBody`, then sends the rest of the body and waits for the connection to close. */
async function sendBodyPastTheAnswer(head: string): Promise<Exchange> {
  const { socket, exchange, closed } = await answeredBeforeItsBody(head);
  for (let sent = FIRST_PART; sent < BODY_BYTES && !socket.destroyed; sent += FIRST_PART) socket.write(Buffer.alloc(FIRST_PART, 0x20));
  if (!socket.destroyed) socket.end();
  await closed;
  return exchange;
}

describe('a lingering close', () => {
  it('lets a client that asked to close read the answer to a GET whose body Convene does not read, while it sends the rest', async () => {
    const exchange = await sendBodyPastTheAnswer(
      'GET /v1/users/me HTTP/1.1\r\nhost: convene.test\r\nconnection: close\r\n' +
        `authorization: Bearer ${alice.accessToken}\r\ncontent-type: application/json\r\ncontent-length: ${BODY_BYTES}\r\n\r\n`,
    );
    expect(exchange.error).toBeUndefined();
    expect(exchange.ended).toBe(true);
    expect(exchange.received).toMatch(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(exchange.received.slice(exchange.received.indexOf('\r\n\r\n') + 4))).toMatchObject({ id: alice.id });
  });

  it('lets it read the 404 of a path of no operation, answered before its body, while it sends the rest', async () => {
    const exchange = await sendBodyPastTheAnswer(
      `POST /v1/nothing-here HTTP/1.1\r\nhost: convene.test\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${BODY_BYTES}\r\n\r\n`,
    );
    expect(exchange.error).toBeUndefined();
    expect(exchange.ended).toBe(true);
    expect(exchange.received).toMatch(/^HTTP\/1\.1 404 /);
  });

  it('closes the connection of a client that stops sending and never closes, once LINGER_MS have passed', { timeout: 4 * LINGER_MS + 5_000 }, async () => {
    const { socket, exchange, closed } = await answeredBeforeItsBody(
      `POST /v1/nothing-here HTTP/1.1\r\nhost: convene.test\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${BODY_BYTES}\r\n\r\n`,
    );
    expect(exchange.received).toMatch(/^HTTP\/1\.1 404 /);
    // a half-open client learns of the server's close only when it writes: a byte at a time until the reset
    await expect
      .poll(
        () => {
          if (!socket.destroyed) socket.write(' ');
          return exchange.error?.code;
        },
        { timeout: 4 * LINGER_MS, interval: LINGER_MS / 10 },
      )
      .toMatch(/^(EPIPE|ECONNRESET)$/);
    await closed;
  });
});
