/**
 * Opening `/signaling` over real HTTP: every rejection is a plain HTTP answer before the upgrade
 * with the contract's error body; the answer echoes only the chosen protocol (the client's first
 * accepted one, from one header or several, in any order); a ticket works once, concurrently too,
 * and on another instance exactly when the instances share Redis; an expired ticket or one whose
 * room is gone is refused. Requests are raw (node:http) so that headers can be shaped freely.
 */
import { randomBytes } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { validateHandshakeError } from '../../../generated/signaling/validators.js';
import { randomAlphanumeric } from '../../../src/domain/tickets/random-token.js';
import { connect, DEFAULT_PROTOCOL, startTicket, type Starter } from '../../support/signaling-client.js';
import { dbOf, insertRoom, redisUrl, signalingConfig, useSignalingApp } from '../../support/signaling.js';
import type { TestApp } from '../../support/test-app.js';

const PROTOCOLS = ['service-signaling-json-v1.0', 'opentalk-signaling-json-v1.0', 'k3k-signaling-json-v1.0'];

interface Opening {
  status: number;
  headers: IncomingHttpHeaders;
  /** The error body of a refused opening. */
  body?: any;
}

const upgraded: Duplex[] = [];
/** Drops every upgraded socket (an instance's close waits for its sockets). */
const dropUpgraded = () => {
  for (const socket of upgraded.splice(0)) socket.destroy();
};

/**
 * A raw WebSocket opening: the upgrade headers (any of them replaced or, as undefined, left out)
 * and `Sec-WebSocket-Protocol` as one header (a string) or several (an array).
 */
function open(
  app: TestApp,
  {
    path = '/signaling',
    method = 'GET',
    protocol,
    headers = {},
  }: { path?: string; method?: string; protocol?: string | string[]; headers?: Record<string, string | undefined> } = {},
): Promise<Opening> {
  const all: Record<string, string | string[] | undefined> = {
    connection: 'Upgrade',
    upgrade: 'websocket',
    'sec-websocket-key': randomBytes(16).toString('base64'),
    'sec-websocket-version': '13',
    'sec-websocket-protocol': protocol,
    ...headers,
  };
  const sent = Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined)) as Record<string, string | string[]>;
  return new Promise((resolve, reject) => {
    const req = request(`${app.url}${path}`, { method, headers: sent });
    req.on('upgrade', (res, socket) => {
      upgraded.push(socket);
      resolve({ status: res.statusCode!, headers: res.headers });
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

/** A refusal with the contract's handshake error body. */
function expectRefused(answer: Opening, status: number, code: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json');
  expect(validateHandshakeError(answer.body), JSON.stringify(validateHandshakeError.errors)).toBe(true);
  expect(answer.body).toMatchObject({ code, status: String(status) });
}

describe('GET /signaling', () => {
  const app = useSignalingApp();

  afterEach(() => {
    dropUpgraded();
    vi.useRealTimers();
  });

  async function owner(): Promise<Starter> {
    const user = await app.login('owner');
    return { roomId: await insertRoom(app, user), token: user.accessToken };
  }
  const ticketOf = async (starter: Starter) => (await startTicket(app, starter)).ticket;

  describe('refused before the upgrade', () => {
    it('answers 400 missing_protocol without the header, or with only a ticket in it', async () => {
      const ticket = await ticketOf(await owner());
      expectRefused(await open(app), 400, 'missing_protocol');
      expectRefused(await open(app, { protocol: `ticket#${ticket}` }), 400, 'missing_protocol');
    });

    it('answers 400 invalid_protocol when no offered protocol is accepted', async () => {
      const ticket = await ticketOf(await owner());
      expectRefused(await open(app, { protocol: `chat, ticket#${ticket}` }), 400, 'invalid_protocol');
      // nothing was redeemed: the ticket still opens the socket
      expect((await open(app, { protocol: `${DEFAULT_PROTOCOL}, ticket#${ticket}` })).status).toBe(101);
    });

    it('answers 401 missing_ticket without a ticket entry', async () => {
      expectRefused(await open(app, { protocol: DEFAULT_PROTOCOL }), 401, 'missing_ticket');
    });

    it('answers 401 invalid_ticket for a malformed, an unknown and a used ticket', async () => {
      const ticket = await ticketOf(await owner());
      expectRefused(await open(app, { protocol: `${DEFAULT_PROTOCOL}, ticket#${ticket.slice(1)}` }), 401, 'invalid_ticket');
      expectRefused(await open(app, { protocol: `${DEFAULT_PROTOCOL}, ticket#${randomAlphanumeric()}` }), 401, 'invalid_ticket');
      expect((await open(app, { protocol: `${DEFAULT_PROTOCOL}, ticket#${ticket}` })).status).toBe(101);
      expectRefused(await open(app, { protocol: `${DEFAULT_PROTOCOL}, ticket#${ticket}` }), 401, 'invalid_ticket');
    });

    it('answers 401 invalid_ticket for an expired ticket', async () => {
      const ticket = await ticketOf(await owner());
      await expireTicket(ticket);
      expectRefused(await open(app, { protocol: `${DEFAULT_PROTOCOL}, ticket#${ticket}` }), 401, 'invalid_ticket');
    });

    it('answers 401 invalid_ticket when the room was deleted after the start', async () => {
      const starter = await owner();
      const ticket = await ticketOf(starter);
      await dbOf(app).deleteFrom('rooms').where('id', '=', starter.roomId).execute();
      expectRefused(await open(app, { protocol: `${DEFAULT_PROTOCOL}, ticket#${ticket}` }), 401, 'invalid_ticket');
    });

    it('answers 400 invalid_upgrade for what is not a WebSocket opening, leaving the ticket unused', async () => {
      const ticket = await ticketOf(await owner());
      const protocol = `${DEFAULT_PROTOCOL}, ticket#${ticket}`;
      for (const refused of [
        await open(app, { protocol, method: 'POST' }),
        await open(app, { protocol, headers: { upgrade: 'h2c' } }),
        await open(app, { protocol, headers: { 'sec-websocket-key': undefined } }),
        await open(app, { protocol, headers: { 'sec-websocket-version': '12' } }),
      ]) {
        expectRefused(refused, 400, 'invalid_upgrade');
      }
      expect((await open(app, { protocol })).status).toBe(101);
    });

    it('leaves upgrade requests to other paths to the HTTP API', async () => {
      const ticket = await ticketOf(await owner());
      const answer = await open(app, { path: '/signalling', protocol: `${DEFAULT_PROTOCOL}, ticket#${ticket}` });
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({ code: 'not_found', status: '404' });
      // curl's `--http2` on plain HTTP asks to upgrade to h2c: the operation answers as usual
      expect((await open(app, { path: '/health', headers: { upgrade: 'h2c' } })).status).toBe(200);
    });

    it('answers 503 service_unavailable, not silence and not a 500, when the signaling store is unreachable', async () => {
      const broken = await app.withConfig({ ...signalingConfig(), redis: { url: 'redis://127.0.0.1:1' } });
      try {
        const answer = await open(broken, { protocol: `${DEFAULT_PROTOCOL}, ticket#${randomAlphanumeric()}` });
        expectRefused(answer, 503, 'service_unavailable');
      } finally {
        await broken.close();
      }
    });
  });

  describe('upgraded', () => {
    it.each(PROTOCOLS)('echoes only the protocol name %s', async (protocol) => {
      const ticket = await ticketOf(await owner());
      const answer = await open(app, { protocol: `${protocol}, ticket#${ticket}` });
      expect(answer.status).toBe(101);
      expect(answer.headers['sec-websocket-protocol']).toBe(protocol);
    });

    it('reads the entries from several headers, in any order', async () => {
      const starter = await owner();
      const first = await open(app, { protocol: [`ticket#${await ticketOf(starter)}`, 'opentalk-signaling-json-v1.0'] });
      expect(first.headers['sec-websocket-protocol']).toBe('opentalk-signaling-json-v1.0');
      const second = await open(app, { protocol: [' x-unknown ', `k3k-signaling-json-v1.0 , ticket#${await ticketOf(starter)}`] });
      expect(second.headers['sec-websocket-protocol']).toBe('k3k-signaling-json-v1.0');
    });

    it("gives a client offering two accepted protocols its own first, whatever the server's order", async () => {
      const starter = await owner();
      const answer = await open(app, { protocol: `ticket#${await ticketOf(starter)}, k3k-signaling-json-v1.0, service-signaling-json-v1.0` });
      expect(answer.headers['sec-websocket-protocol']).toBe('k3k-signaling-json-v1.0');
      // a real ws client with the ticket first, as the reference's web app sends it
      const client = await connect(app, await ticketOf(starter), ['opentalk-signaling-json-v1.0', 'service-signaling-json-v1.0']);
      expect(client.ws.protocol).toBe('opentalk-signaling-json-v1.0');
      await client.close();
    });

    it('ignores a query string', async () => {
      const ticket = await ticketOf(await owner());
      expect((await open(app, { path: '/signaling?client=web', protocol: `${DEFAULT_PROTOCOL}, ticket#${ticket}` })).status).toBe(101);
    });

    it('lets only one of two concurrent openings with the same ticket through', async () => {
      const ticket = await ticketOf(await owner());
      const protocol = `${DEFAULT_PROTOCOL}, ticket#${ticket}`;
      const answers = await Promise.all([open(app, { protocol }), open(app, { protocol }), open(app, { protocol })]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([101, 401, 401]);
      for (const refused of answers.filter((answer) => answer.status !== 101)) expectRefused(refused, 401, 'invalid_ticket');
    });
  });

  describe('a ticket issued by another instance over the same database', () => {
    it.skipIf(!redisUrl)('is redeemed, once, when the instances share Redis', async () => {
      const other = await app.withConfig(signalingConfig());
      try {
        const ticket = await ticketOf(await owner());
        const protocol = `${DEFAULT_PROTOCOL}, ticket#${ticket}`;
        expect((await open(other, { protocol })).status).toBe(101);
        expectRefused(await open(app, { protocol }), 401, 'invalid_ticket');
      } finally {
        dropUpgraded();
        await other.close();
      }
    });

    it.skipIf(!!redisUrl)('is unknown without Redis (each instance has its own store)', async () => {
      const other = await app.withConfig(signalingConfig());
      try {
        const ticket = await ticketOf(await owner());
        const protocol = `${DEFAULT_PROTOCOL}, ticket#${ticket}`;
        expectRefused(await open(other, { protocol }), 401, 'invalid_ticket');
        expect((await open(app, { protocol })).status).toBe(101);
      } finally {
        dropUpgraded();
        await other.close();
      }
    });
  });
});

/**
 * Moves the ticket past its 30 s: in Redis by ending its key's lifetime, in the in-process store
 * (which reads the system clock) by moving the clock. Real timers keep running either way.
 */
async function expireTicket(ticket: string): Promise<void> {
  if (!redisUrl) {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 31_000);
    return;
  }
  const redis = new Redis(redisUrl);
  try {
    expect(await redis.pexpire(`convene:signaling:ticket:${ticket}`, 1)).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    await redis.quit();
  }
}
