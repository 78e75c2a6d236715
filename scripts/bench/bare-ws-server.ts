// The signaling benchmark's baseline (issue 7): a bare `ws` server that does nothing but the
// broadcast under test, in a process of its own as each Convene instance is. A client's `timer`
// `start` (or `stop`) is parsed and answered with the frame Convene sends for it, `started` (or
// `stopped`) with the same fields, serialised once and sent to every connected client, as the ws
// README's broadcast does. Sockets as Convene configures them: no compression, no client tracking
// beyond the set that the broadcast needs.
//
// Forked by the signaling benchmark (signaling-scenarios.ts) with an IPC channel and --expose-gc; answers
// `{type: 'ready', url}`, `memory` (process.memoryUsage() after full collections, and the CPU time
// so far), stops on `close`.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { WebSocket, WebSocketServer } from 'ws';
import type { ServerMemory, ServerReady, ServerRequest } from './signaling-server.js';

if (!process.send || !global.gc) throw new Error('forked by the signaling benchmark (with an IPC channel and --expose-gc)');
const send = process.send.bind(process);
const gc = global.gc;

/** Who stopped the timer, in `stopped` (Convene names the moderator's participant id). */
const moderatorId = randomUUID();
const http = createServer();
const clients = new Set<WebSocket>();
const wss = new WebSocketServer({ server: http, path: '/signaling', clientTracking: false, perMessageDeflate: false });

wss.on('connection', (ws) => {
  clients.add(ws);
  ws.on('close', () => clients.delete(ws));
  ws.on('message', (data: Buffer) => {
    const { payload } = JSON.parse(data.toString()) as { payload: Record<string, unknown> };
    const timestamp = new Date().toISOString();
    const event =
      payload.action === 'start'
        ? { message: 'started', timer_id: randomUUID(), kind: payload.kind, started_at: timestamp, ready_check_enabled: payload.enable_ready_check }
        : { message: 'stopped', timer_id: payload.timer_id, kind: 'by_moderator', participant_id: moderatorId };
    const frame = JSON.stringify({ namespace: 'timer', timestamp, payload: event });
    for (const client of clients) if (client.readyState === WebSocket.OPEN) client.send(frame);
  });
});

http.listen(0, '127.0.0.1', () => {
  const { port } = http.address() as { port: number };
  send({ type: 'ready', url: `http://127.0.0.1:${port}` } satisfies ServerReady);
});

async function answer(request: ServerRequest): Promise<void> {
  if (request.type === 'close') process.exit(0);
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  send({ type: 'memory', usage: process.memoryUsage(), cpu: process.cpuUsage() } satisfies ServerMemory);
}
// A listener's return value is ignored: the answer's promise is dropped as before, explicitly.
process.on('message', (request: ServerRequest) => void answer(request));
process.on('disconnect', () => process.exit(0));
