/**
 * `Session.enqueue` on a real connection and socket: a module's task (a moderator's order about the
 * participant) runs in the socket's own order, after the command in progress and before the
 * commands the client sent after it was queued; a task that fails is logged and the socket goes on;
 * once the socket is closing no task runs. The connection runs the real modules except `echo`, whose
 * handling the test holds back and records.
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

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What ran, in order: echo commands as their `action`, tasks as the test names them. */
const ran: string[] = [];

/**
 * An echo that records each command and holds the one named `slow` until `release`; `underway`
 * settles once the server is handling `slow` (so a test knows it is the command in progress, not
 * one still on the wire).
 */
function recordingEcho() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const underway = new Promise<void>((resolve) => (started = resolve));
  const module: SignalingModule = {
    namespace: 'echo',
    async handleCommand(session, command) {
      if (command.action === 'slow') {
        started();
        await released;
      }
      ran.push(command.action);
      session.send('echo', command);
    },
  };
  return { module, release, underway };
}

/** One connection on a real socket (a caller that never joins: no module reads the database). */
async function connection(echo: SignalingModule) {
  ran.length = 0;
  const config = loadConfig({ file: false, env: {} });
  const logger = pino({ level: 'silent' });
  const bus = createLocalBus(logger);
  const scheduler = systemScheduler();
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
  const session = new Connection(server, room, participant, deps);
  // listening after the connection: once this settles, the connection knows its socket closed
  const serverClosed = once(server, 'close');
  await once(client.ws, 'open');
  cleanups.push(async () => {
    await client.close();
    await session.done;
    wss.close();
    await signalingStore.close();
    await bus.close();
  });
  return { client, session, serverClosed };
}

it("runs a task after the command in progress and before the client's next command", async () => {
  const echo = recordingEcho();
  const { client, session } = await connection(echo.module);
  client.command('echo', 'slow');
  await echo.underway;
  session.enqueue(async () => {
    ran.push('task');
  });
  client.command('echo', 'after');
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(ran).toEqual([]);
  echo.release();
  await client.next('echo');
  await client.next('echo');
  expect(ran).toEqual(['slow', 'task', 'after']);
});

it('goes on after a task that fails', async () => {
  const echo = recordingEcho();
  const { client, session } = await connection(echo.module);
  echo.release();
  session.enqueue(async () => {
    throw new Error('a failing order');
  });
  client.command('echo', 'next');
  expect((await client.next('echo')).payload).toEqual({ action: 'next' });
});

it('runs no task once the socket is closing', async () => {
  const echo = recordingEcho();
  const { client, session, serverClosed } = await connection(echo.module);
  client.command('echo', 'slow');
  await echo.underway;
  session.enqueue(async () => {
    ran.push('queued before the close');
  });
  await client.close();
  await serverClosed;
  session.enqueue(async () => {
    ran.push('queued after the close');
  });
  echo.release();
  await session.done;
  expect(ran).toEqual(['slow']);
});
