/**
 * A TCP relay on loopback in front of an instance, whose connections a test can cut: the client's
 * side is destroyed (its socket sees the connection die, 1006 for a WebSocket), while the server's
 * side is either closed too or held open, so that the server does not notice the drop until
 * `release()` (as when a network fails between the two: the client learns first).
 */
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpCut {
  /** The relay as a server URL (`http://127.0.0.1:<port>`). */
  url: string;
  /** Cuts every connection through the relay; `holdServerSide`: the server's side stays open until `release()`. */
  cut(options?: { holdServerSide?: boolean }): void;
  /** Closes the server's sides held open by `cut`. */
  release(): void;
  close(): Promise<void>;
}

export async function tcpCut(target: string): Promise<TcpCut> {
  const { hostname, port } = new URL(target);
  const pairs = new Set<{ client: Socket; server: Socket; held: boolean }>();
  const held: Socket[] = [];
  const relay = createServer((client) => {
    const server = connect(Number(port), hostname);
    const pair = { client, server, held: false };
    pairs.add(pair);
    client.pipe(server);
    server.pipe(client);
    // a destroyed side's pending writes fail: nothing to tell anyone
    client.on('error', () => client.destroy());
    server.on('error', () => server.destroy());
    client.on('close', () => {
      pairs.delete(pair);
      if (!pair.held) server.destroy();
    });
    server.on('close', () => client.destroy());
  });
  const release = () => {
    for (const server of held.splice(0)) server.destroy();
  };
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
    cut({ holdServerSide = false } = {}) {
      for (const pair of [...pairs]) {
        pair.held = holdServerSide;
        if (holdServerSide) {
          // without the client's side nothing reads the server's frames: they must not pile up here
          pair.server.unpipe(pair.client);
          pair.server.resume();
          held.push(pair.server);
        }
        pair.client.destroy();
      }
    },
    release,
    async close() {
      release();
      for (const { client } of pairs) client.destroy();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    },
  };
}
