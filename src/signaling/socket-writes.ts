/**
 * How room events reach the sockets cheaply, for rooms of thousands (issue 7):
 *
 * - One WebSocket frame per event for every recipient: `textFrame` builds the bytes once (header
 *   and JSON), and each connection writes that same buffer to its socket. Going through ws would
 *   frame it again per socket (a header, a cork, two writes); writing beside ws is safe because
 *   ws writes each of its own frames synchronously when it has no extension (the server turns
 *   permessage-deflate off), so frames never interleave, and its `bufferedAmount` counts what waits
 *   in the socket.
 * - A socket's room events of one turn of the event loop go out together (`holdForTurn`): one
 *   system call per socket and turn instead of one per event. While a room fills, every arrival is
 *   a `joined` to everyone already in, many per turn when many join at once; a write to a loopback
 *   or LAN socket costs far more than framing the message (it wakes the reader), so this divides
 *   both this server's and the clients' cost by the events per turn. A lone event waits only for the
 *   rest of its turn (the other ready sockets' callbacks), then leaves as before.
 *
 * The hold is the socket's own cork (Node's Writable): writes inside it queue in order (a direct
 * answer sent meanwhile waits behind the held events) and the uncork at the turn's end
 * (setImmediate) writes them at once, or earlier once FLUSH_BYTES wait, so that a turn of hundreds
 * of events does not pile them all up in memory; closing (`end`) flushes whatever is held, and
 * destroying a socket drops it, as it would drop unsent data anyway.
 */
import type { Duplex } from 'node:stream';

/** A server-to-client (unmasked) WebSocket text frame, final, carrying `text`. */
export function textFrame(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const header = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + length);
  frame[0] = 0x81; // FIN, opcode 1 (text)
  if (header === 2) {
    frame[1] = length;
  } else if (header === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  frame.write(text, header, 'utf8');
  return frame;
}

/**
 * Bytes a held socket may gather before they go out without waiting for the turn's end: dozens of
 * events per write still, and a bounded queue per socket when a turn brings hundreds of them.
 */
const FLUSH_BYTES = 16 * 1024;

let held: Duplex[] = [];

/** Holds the socket's writes until this turn of the event loop ends, or until FLUSH_BYTES wait. */
export function holdForTurn(socket: Duplex): void {
  if (socket.writableCorked > 0) {
    if (socket.writableLength < FLUSH_BYTES) return;
    socket.uncork(); // writes what waits, and holds on
    socket.cork();
    return;
  }
  socket.cork();
  if (held.push(socket) === 1) setImmediate(release);
}

function release(): void {
  const sockets = held;
  held = [];
  for (const socket of sockets) socket.uncork();
}
