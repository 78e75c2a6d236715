/**
 * How room events reach the sockets (src/signaling/socket-writes.ts and the room hub's shared
 * frames), on real sockets: a frame built by `textFrame` and written beside ws reaches a ws client
 * as the same text, whatever its length header; a socket held for the turn writes nothing until the
 * turn ends (or 16 KiB wait), then everything in order, answers sent through ws meanwhile included;
 * and a room event reaches every connection of the hub as the same frame, serialised once with one
 * timestamp while the clock moves on between recipients.
 */
import { once } from 'node:events';
import type { AddressInfo, Socket } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { loadConfig } from '../../../src/config/load.js';
import { createTariffCatalog } from '../../../src/domain/tariffs/tariff-catalog.js';
import { createLocalBus } from '../../../src/signaling/bus/local.js';
import { Connection } from '../../../src/signaling/connection.js';
import { RoomHubs } from '../../../src/signaling/room-hub.js';
import type { Scheduler } from '../../../src/signaling/scheduler.js';
import { holdForTurn, textFrame } from '../../../src/signaling/socket-writes.js';
import { createLocalSignalingStore } from '../../../src/signaling/store/local.js';
import { SignalingClient } from '../../support/signaling-client.js';
import { modulesWithoutRoomEntry } from '../../support/module-tester.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const endOfTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A ws server on port 0; `accept` opens a client and answers the server's side of it: its WebSocket and the socket under it. */
async function wsServer() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await once(wss, 'listening');
  cleanups.push(() => void wss.close());
  const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  return {
    async accept(): Promise<{ client: WebSocket; server: WebSocket; socket: Socket }> {
      const accepted = once(wss, 'connection') as Promise<[WebSocket, { socket: Socket }]>;
      const client = new WebSocket(url);
      const [server, request] = await accepted;
      await once(client, 'open');
      cleanups.push(() => client.terminate());
      return { client, server, socket: request.socket };
    },
  };
}

/** The texts the client receives, in order. */
function texts(client: WebSocket): string[] {
  const received: string[] = [];
  client.on('message', (data: Buffer) => received.push(data.toString()));
  return received;
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 3_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('textFrame', () => {
  it('frames texts that a ws client reads back, at each edge of the length header', async () => {
    const { client, socket } = await (await wsServer()).accept();
    const received = texts(client);
    // byte lengths 0, 125 | 126 (two-byte 'é's: 63 characters, 126 bytes), 65535 | 65536, and past that
    const sent = ['', 'x'.repeat(125), 'é'.repeat(63), 'y'.repeat(65_535), 'z'.repeat(65_536), `{"ü":"${'w'.repeat(100_000)}"}`];
    for (const text of sent) socket.write(textFrame(text));
    await until(() => received.length === sent.length);
    expect(received).toEqual(sent);
  });

  it('writes the shortest length header, as RFC 6455 requires', () => {
    const header = (text: string, bytes: number) => [...textFrame(text).subarray(0, bytes)];
    expect(header('x'.repeat(125), 2)).toEqual([0x81, 125]);
    expect(header('é'.repeat(63), 4)).toEqual([0x81, 126, 0, 126]); // 126 bytes
    expect(header('x'.repeat(65_535), 4)).toEqual([0x81, 126, 0xff, 0xff]);
    expect(header('x'.repeat(65_536), 10)).toEqual([0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0]);
  });
});

describe('holdForTurn', () => {
  it('holds the socket until the turn ends, then writes everything in order', async () => {
    const { client, server, socket } = await (await wsServer()).accept();
    const received = texts(client);
    holdForTurn(socket);
    socket.write(textFrame('first'));
    server.send('second, through ws'); // a direct answer in between
    holdForTurn(socket); // held already: still one hold
    socket.write(textFrame('third'));
    expect(socket.writableCorked).toBe(1);
    // nothing has gone to the kernel yet: all of it waits in the socket
    expect(socket.writableLength).toBeGreaterThan(0);
    await endOfTurn();
    expect(socket.writableCorked).toBe(0);
    await until(() => received.length === 3);
    expect(received).toEqual(['first', 'second, through ws', 'third']);
  });

  it('writes early once 16 KiB wait, and holds on for the rest of the turn', async () => {
    const { client, socket } = await (await wsServer()).accept();
    const received = texts(client);
    const big = 'b'.repeat(16 * 1024);
    holdForTurn(socket);
    socket.write(textFrame(big));
    expect(socket.writableLength).toBeGreaterThan(16 * 1024);
    holdForTurn(socket); // the next event's send: what waits goes out first
    expect(socket.writableLength).toBe(0);
    expect(socket.writableCorked).toBe(1);
    socket.write(textFrame('small'));
    expect(socket.writableLength).toBeGreaterThan(0);
    await endOfTurn();
    expect(socket.writableCorked).toBe(0);
    await until(() => received.length === 2);
    expect(received).toEqual([big, 'small']);
  });

  it('lets a closing socket flush what it holds', async () => {
    const { client, server, socket } = await (await wsServer()).accept();
    const received = texts(client);
    holdForTurn(socket);
    socket.write(textFrame('before the close'));
    server.close(1000, 'bye');
    const [code] = (await once(client, 'close')) as [number];
    expect(code).toBe(1000);
    expect(received).toEqual(['before the close']);
  });
});

describe('room events through the hub', () => {
  it('sends each connection the same frame, with one timestamp, though the clock moves on between them', async () => {
    const config = loadConfig({ file: false, env: {} });
    const logger = pino({ level: 'silent' });
    const bus = createLocalBus(logger);
    // a clock a millisecond further on each time it is read: one serialisation per recipient would show
    let nowMs = Date.parse('2026-11-22T09:00:00.000Z');
    const scheduler: Scheduler = { now: () => nowMs++, at: () => () => undefined };
    // the participants never join: no module reads the database
    const modules = modulesWithoutRoomEntry({ config: config.signaling, bus, hubs: () => hubs, scheduler, logger });
    const hubs = new RoomHubs(bus, modules.byNamespace, logger);
    const signalingStore = createLocalSignalingStore();
    cleanups.push(() => signalingStore.close());
    const deps = { config: config.signaling, hubs, modules, signalingStore, scheduler, logger };
    const room = { roomId: crypto.randomUUID(), ownerId: crypto.randomUUID(), waitingRoom: false, tariff: createTariffCatalog(config.tariffs).defaultTariff };

    const server = await wsServer();
    const clients: SignalingClient[] = [];
    for (let i = 0; i < 3; i++) {
      const { client, server: ws, socket } = await server.accept();
      const id = crypto.randomUUID();
      const participant = {
        id,
        who: { kind: 'sip', sipId: id },
        kind: 'sip',
        role: 'guest',
        isRoomOwner: false,
        resuming: false,
        resumption: crypto.randomUUID(),
      } as const;
      const connection = new Connection(ws, room, participant, deps, socket);
      connection.state = 'joined'; // as the control module leaves it after `join`
      cleanups.push(async () => {
        client.terminate();
        await connection.done;
      });
      clients.push(new SignalingClient(client));
    }
    await until(() => hubs.get(room.roomId)?.sessions.size === 3);

    const payload = {
      message: 'started',
      timer_id: crypto.randomUUID(),
      kind: 'stopwatch',
      started_at: new Date(nowMs).toISOString(),
      ready_check_enabled: false,
    };
    await bus.publish(room.roomId, { namespace: 'timer', payload, audience: { to: 'room' } });
    const frames = await Promise.all(clients.map((client) => client.next('timer', 'started')));
    expect(frames.map((frame) => frame.payload)).toEqual([payload, payload, payload]);
    expect(new Set(frames.map((frame) => frame.timestamp)).size).toBe(1);
  });
});
