/**
 * A connection's reading under load, on a real socket: while a command is slow (each may wait on
 * Redis), a client sending faster is no longer read once enough frames wait, instead of every frame
 * it sends piling up in memory; when the commands catch up, reading goes on and every frame is
 * answered, in order. The connection runs with the real modules except `echo`, whose answers the
 * test holds back.
 *
 * And a module that throws on a command: the sender is told `internal_error`, the socket goes on.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { loadConfig } from '../../../src/config/load.js';
import { createTariffCatalog } from '../../../src/domain/tariffs/tariff-catalog.js';
import { createLocalBus } from '../../../src/signaling/bus/local.js';
import { Connection } from '../../../src/signaling/connection.js';
import type { SignalingModule } from '../../../src/signaling/modules/module.js';
import { RoomHubs } from '../../../src/signaling/room-hub.js';
import { systemScheduler } from '../../../src/signaling/scheduler.js';
import { createLocalSignalingStore } from '../../../src/signaling/store/local.js';
import { SignalingClient } from '../../support/signaling-client.js';
import { modulesWithoutRoomEntry } from '../../support/module-tester.js';

const FRAMES = 200;
/** Large enough that the frames arrive over many reads, small enough to stay under the soft limit. */
const PADDING = 'x'.repeat(60_000);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An echo whose answers wait until `release` is called. */
function heldEcho() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let handled = 0;
  const module: SignalingModule = {
    namespace: 'echo',
    async handleCommand(session, command) {
      handled++;
      await released;
      session.send('echo', command);
    },
  };
  return { module, release, handled: () => handled };
}

/** A `/signaling`-like server whose one connection is returned with the client's socket. */
async function connectionWith(echo: SignalingModule) {
  const config = loadConfig({ file: false, env: {} });
  const logger = pino({ level: 'silent' });
  const bus = createLocalBus(logger);
  const scheduler = systemScheduler();
  // the participant never joins: no module reads the database
  const real = modulesWithoutRoomEntry({ config: config.signaling, bus, hubs: () => hubs, scheduler, logger });
  const byNamespace = new Map(real.byNamespace).set('echo', echo);
  const hubs = new RoomHubs(bus, byNamespace, logger);
  const signalingStore = createLocalSignalingStore();
  const deps = { config: config.signaling, hubs, modules: { control: real.control, byNamespace }, signalingStore, scheduler, logger };
  const room = { roomId: crypto.randomUUID(), ownerId: crypto.randomUUID(), waitingRoom: false, tariff: createTariffCatalog(config.tariffs).defaultTariff };
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

  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(wss, 'listening');
  const accepted = once(wss, 'connection') as Promise<[WebSocket]>;
  const client = new SignalingClient(new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`));
  const [server] = await accepted;
  const connection = new Connection(server, room, participant, deps);
  await once(client.ws, 'open');
  cleanups.push(async () => {
    await client.close();
    await connection.done;
    wss.close();
    await signalingStore.close();
  });
  return { client, server };
}

it('stops reading a client whose commands wait, and answers every frame once they go on', async () => {
  const echo = heldEcho();
  const { client, server } = await connectionWith(echo.module);
  cleanups.push(echo.release); // first: a failed test must not leave the socket's departure waiting
  let read = 0;
  server.on('message', () => read++);
  for (let n = 0; n < FRAMES; n++) client.command('echo', 'ping', { n, padding: PADDING });

  // the first command is held: the server reads on until enough frames wait, then stops
  const deadline = Date.now() + 3_000;
  while (!server.isPaused && read < FRAMES && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(server.isPaused).toBe(true);
  expect(echo.handled()).toBe(1);
  // what was read when it stopped, and perhaps the rest of that read: far from all of it
  expect(read).toBeLessThan(FRAMES / 2);

  echo.release();
  for (let n = 0; n < FRAMES; n++) expect((await client.next('echo')).payload.n).toBe(n);
  expect(server.isPaused).toBe(false);
});

it('answers internal_error when a module fails on a command, and goes on serving the socket', async () => {
  let calls = 0;
  const failingOnce: SignalingModule = {
    namespace: 'echo',
    async handleCommand(session, command) {
      if (++calls === 1) throw new Error('module failure');
      session.send('echo', command);
    },
  };
  const { client } = await connectionWith(failingOnce);
  client.command('echo', 'ping', { n: 1 });
  expect((await client.next('control', 'error')).payload).toEqual({ message: 'error', error: 'internal_error' });
  client.command('echo', 'ping', { n: 2 });
  expect((await client.next('echo')).payload).toEqual({ action: 'ping', n: 2 });
  expect(client.inbox).toEqual([]);
});
