/**
 * A stand-in `/signaling` server for the typed client's tests, for what the real server never
 * sends, or never sends so closely: it accepts any opening and answers the client's first frame with
 * the frames given, written to the connection in one piece (so the client reads them in one read,
 * which Node's WebSockets dispatch within one task), then closes with `closeWith` when given.
 * (Answering, not sending at once, so that the client's wait is in place before the frames come.)
 *
 *   const server = await standIn([started, stopped], { closeWith: 4000 });
 *   const connection = await connectSignaling({ url: server.url, ticket: 'any' });
 */
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import { DEFAULT_PROTOCOL } from './signaling-client.js';

export interface StandIn {
  url: string;
  close(): Promise<void>;
}

export async function standIn(frames: string | string[], options: { closeWith?: number } = {}): Promise<StandIn> {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: () => DEFAULT_PROTOCOL });
  server.on('connection', (socket) =>
    socket.once('message', () => {
      // the ws package's own TCP socket: corked, its writes leave together
      const tcp = (socket as unknown as { _socket: Socket })._socket;
      tcp.cork();
      for (const frame of [frames].flat()) socket.send(frame);
      if (options.closeWith !== undefined) socket.close(options.closeWith);
      process.nextTick(() => tcp.uncork());
    }),
  );
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}
