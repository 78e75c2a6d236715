/**
 * Caps on open signaling sockets (issue 22; `[signaling_caps]`): per registered user, per invite
 * code (its guests together) and per source address, each tested at its edge: N sockets open, the
 * next opening is refused with HTTP 429 `too_many_connections` (the contract's handshake error
 * body), and a closed socket frees its place. Call-in gateways are exempt. With Redis the counts
 * hold across instances, and what a dead instance held stops counting (instance liveness).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { validateHandshakeError } from '../../../generated/signaling/validators.js';
import {
  freshSource,
  insertInvite,
  insertRoom,
  insertSipConfig,
  redisUrl,
  signalingConfig,
  startCallIn,
  startInvited,
  startRoom,
} from '../../support/signaling.js';
import { useTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

const CAPS = { sockets_per_user: 3, sockets_per_invite_code: 4, sockets_per_source: 5 };
// short liveness so that a dead instance is judged soon after start (with Redis)
const LIVENESS = { instance_ttl_ms: 400, instance_refresh_ms: 100, crash_sweep_interval_ms: 100 };
const config = { ...signalingConfig(), signaling_caps: CAPS, signaling: LIVENESS };
const app = useTestApp(config);

interface Opening {
  status: number;
  headers: IncomingHttpHeaders;
  body?: any;
  socket?: Duplex;
}

const upgraded: Duplex[] = [];
afterEach(() => {
  for (const socket of upgraded.splice(0)) socket.destroy();
});

/** Opens `/signaling` with `ticket` from `source` (X-Forwarded-For; the test app trusts it). */
function open(target: TestApp, ticket: string, source = freshSource()): Promise<Opening> {
  const headers = {
    connection: 'Upgrade',
    upgrade: 'websocket',
    'sec-websocket-key': randomBytes(16).toString('base64'),
    'sec-websocket-version': '13',
    'sec-websocket-protocol': `service-signaling-json-v1.0, ticket#${ticket}`,
    'x-forwarded-for': source,
  };
  return new Promise((resolve, reject) => {
    const req = request(`${target.url}/signaling`, { headers });
    req.on('upgrade', (res, socket) => {
      upgraded.push(socket);
      resolve({ status: res.statusCode!, headers: res.headers, socket });
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

function expectOpen(opening: Opening): Duplex {
  expect(opening.status, JSON.stringify(opening.body)).toBe(101);
  return opening.socket!;
}

function expectCapped(opening: Opening, limit: number) {
  expect(opening.status).toBe(429);
  expect(validateHandshakeError(opening.body), JSON.stringify(validateHandshakeError.errors)).toBe(true);
  expect(opening.body).toMatchObject({ code: 'too_many_connections', status: '429' });
  expect(opening.body.message).toContain(`at most ${limit}`);
}

/** Opens with fresh tickets until one is let in: the server frees a place when it sees the socket close. */
async function openOnceFreed(target: TestApp, ticket: () => Promise<string>, source?: string): Promise<Duplex> {
  for (;;) {
    const opening = await open(target, await ticket(), source);
    if (opening.status === 101) return opening.socket!;
    expectCapped(opening, Number(/at most (\d+)/.exec(opening.body.message)![1]));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let owner: TestUser;
let roomId: string;
beforeEach(async () => {
  owner = await app.login('owner');
  roomId = await insertRoom(app, owner);
});

const userTicket = async (target: TestApp = app) => {
  const answer = await startRoom(target, roomId, { token: owner.accessToken, body: {} });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.ticket as string;
};
const guestTicket = async (code: string) => {
  const answer = await startInvited(app, roomId, { invite_code: code });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.ticket as string;
};

describe('open signaling sockets', () => {
  it(`per user: ${CAPS.sockets_per_user} open, the next refused, and a closed one frees its place`, async () => {
    const sockets = [];
    for (let i = 0; i < CAPS.sockets_per_user; i++) sockets.push(expectOpen(await open(app, await userTicket())));
    expectCapped(await open(app, await userTicket()), CAPS.sockets_per_user);
    // another user is not held back by this one's sockets
    const other = await app.login('other');
    const otherRoom = await insertRoom(app, other);
    const answer = await startRoom(app, otherRoom, { token: other.accessToken, body: {} });
    expectOpen(await open(app, answer.body.ticket));

    sockets[0]!.destroy();
    await openOnceFreed(app, () => userTicket());
    expectCapped(await open(app, await userTicket()), CAPS.sockets_per_user);
  });

  it(`per invite code: ${CAPS.sockets_per_invite_code} guests open, the next refused`, async () => {
    const code = await insertInvite(app, roomId, owner);
    for (let i = 0; i < CAPS.sockets_per_invite_code; i++) expectOpen(await open(app, await guestTicket(code)));
    expectCapped(await open(app, await guestTicket(code)), CAPS.sockets_per_invite_code);
    expectOpen(await open(app, await guestTicket(await insertInvite(app, roomId, owner))));
  });

  it(`per source address: ${CAPS.sockets_per_source} open from one address, the next refused`, async () => {
    const source = freshSource();
    // guests of codes of their own, so that only the address is shared
    const codes = await Promise.all(Array.from({ length: CAPS.sockets_per_source + 2 }, () => insertInvite(app, roomId, owner)));
    const sockets = [];
    for (let i = 0; i < CAPS.sockets_per_source; i++) sockets.push(expectOpen(await open(app, await guestTicket(codes[i]!), source)));
    expectCapped(await open(app, await guestTicket(codes[CAPS.sockets_per_source]!), source), CAPS.sockets_per_source);
    expectOpen(await open(app, await guestTicket(codes[CAPS.sockets_per_source]!))); // from another address
    sockets[0]!.destroy();
    await openOnceFreed(app, () => guestTicket(codes[CAPS.sockets_per_source + 1]!), source);
  });

  it('leaves call-in gateways out: one gateway address carries every phone caller', async () => {
    const source = freshSource();
    const sip = await insertSipConfig(app, roomId);
    const token = await app.issuer.serviceToken(['call-in']);
    for (let i = 0; i < CAPS.sockets_per_source + 2; i++) {
      const answer = await startCallIn(app, token, { id: sip.id, pin: sip.pin });
      expect(answer.status).toBe(200);
      expectOpen(await open(app, answer.body.ticket, source));
    }
  });
});

describe.skipIf(!redisUrl)('open signaling sockets across instances (Redis)', () => {
  let second: TestApp;
  let redis: Redis;
  beforeAll(async () => {
    second = await app.withConfig(config);
    redis = new Redis(redisUrl!);
  });
  afterAll(async () => {
    for (const socket of upgraded.splice(0)) socket.destroy();
    await second?.close();
    redis?.disconnect();
  });

  it('counts a user’s sockets on every instance together', async () => {
    expectOpen(await open(app, await userTicket()));
    expectOpen(await open(second, await userTicket(second)));
    expectOpen(await open(app, await userTicket()));
    expectCapped(await open(second, await userTicket(second)), CAPS.sockets_per_user);
    expectCapped(await open(app, await userTicket()), CAPS.sockets_per_user);
  });

  it('stops counting what a dead instance held', async () => {
    // a count under an instance whose liveness key does not exist: one killed with the user's sockets open
    const key = `convene:caps:sockets:user:${owner.id}`;
    await redis.hset(key, randomUUID(), CAPS.sockets_per_user);
    await redis.pexpire(key, 60_000);
    // refused until the instance may judge others (its own key held a whole lifetime), then let in
    await openOnceFreed(app, () => userTicket());
    expect(Object.values(await redis.hgetall(key))).toEqual(['1']);
  });
});
