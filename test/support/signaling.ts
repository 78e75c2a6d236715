/**
 * Fixtures of the signaling start tests (test/integration/signaling-start): an instance on Redis
 * when REDIS_URL is set, rooms, events, invites and SIP configs written straight into the database
 * (independent of the operations that create them), and start requests from a chosen source address.
 *
 * Every request carries its own `X-Forwarded-For` address (the instances trust one proxy hop, which
 * the test client plays),
 * unique to the test run: the rate limiter's counts live in Redis across runs and test files, and
 * a fresh address is a fresh count.
 */
import { randomBytes } from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import type { Config } from '../../src/config/schema.js';
import { createSipConfig } from '../../src/domain/sip/sip-configs.repository.js';
import type { TicketData } from '../../src/domain/tickets/signaling-store.js';
import { insertInvite, insertRoom, inviteToRoomEvent } from './invites.js';
import { dbOf, startTestApp, useTestApp, type TestApp } from './test-app.js';

export type TicketResult = components['schemas']['TicketResult'];
export type ErrorBody = components['schemas']['Error'];

export const redisUrl = process.env.REDIS_URL || undefined;

/**
 * Signaling caps out of the way, for tests and benchmarks whose clients all connect from 127.0.0.1
 * (a browser, or a child server's clients, set no X-Forwarded-For). With Redis the caps count per
 * source across every instance on it, the slow tier's soak (1,000 sockets) and the other test
 * files included: the defaults would refuse these clients while the others run beside them.
 */
export const UNCAPPED = {
  tickets_per_user: 1_000_000_000,
  tickets_per_invite_code: 1_000_000_000,
  tickets_per_source: 1_000_000_000,
  sockets_per_user: 1_000_000,
  sockets_per_invite_code: 1_000_000,
  sockets_per_source: 1_000_000,
};

/** UNCAPPED as a configuration file's section, for child servers. */
export const UNCAPPED_TOML = `[signaling_caps]\n${Object.entries(UNCAPPED)
  .map(([key, value]) => `${key} = ${value}`)
  .join('\n')}\n`;

/** What every instance of these tests needs: the proxy header counts (one hop), and Redis when the run has it. */
export const signalingConfig = (rateLimits?: Config['rate_limits']) => ({
  http: { trust_proxy: 1 },
  ...(redisUrl ? { redis: { url: redisUrl } } : {}),
  ...(rateLimits ? { rate_limits: rateLimits } : {}),
});

/** Default rate limits unless others are given. */
export const startSignalingApp = (rateLimits?: Config['rate_limits']) => startTestApp(signalingConfig(rateLimits));
/** The same as the test file's app, with `useTestApp`'s hooks (started once, emptied before each test). */
export const useSignalingApp = (rateLimits?: Config['rate_limits']) => useTestApp(signalingConfig(rateLimits));

const runPrefix = `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;
let addresses = 0;
/** A client address (IPv6 documentation range) no other test of any run has used. */
export const freshSource = () => `${runPrefix}::${(++addresses).toString(16)}`;

// rooms, events and invite codes as the invite-code tests write them
export { dbOf, insertInvite, insertRoom, inviteToRoomEvent };

/** A SIP config with a generated 10-digit call-in id and pin. */
export async function insertSipConfig(app: TestApp, roomId: string): Promise<{ id: string; pin: string }> {
  const row = await createSipConfig(dbOf(app), roomId);
  return { id: row.sip_id, pin: row.password };
}

export interface Answer<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/** A POST with a JSON body (`string`: sent as is) from `source`; the answer is checked against the contract. */
export async function post(
  app: TestApp,
  path: string,
  { token, body, source = freshSource() }: { token?: string; body?: unknown; source?: string } = {},
): Promise<Answer<any>> {
  const headers: Record<string, string> = { 'x-forwarded-for': source };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await app.request('POST', path, {
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: response.text_ ? JSON.parse(response.text_) : undefined, headers: response.headers };
}

export const startRoom = (app: TestApp, roomId: string, options: Parameters<typeof post>[2] = {}) => post(app, `/v1/rooms/${roomId}/start`, options);
export const startInvited = (app: TestApp, roomId: string, body: unknown, source?: string) => post(app, `/v1/rooms/${roomId}/start_invited`, { body, source });
export const startCallIn = (app: TestApp, token: string | undefined, body: unknown, source?: string) =>
  post(app, '/v1/services/call_in/start', { token, body, source });

/** Redeems the ticket as the WebSocket server will (single use), failing when it is not there. */
export async function redeem(app: TestApp, ticket: string): Promise<TicketData> {
  const data = await app.convene.signalingStore.takeTicket(ticket);
  if (!data) throw new Error(`ticket ${ticket} is not in the signaling store`);
  return data;
}

export const TOKEN_SHAPE = /^[A-Za-z0-9]{64}$/;
export const NOT_A_UUID = 'not-a-uuid';
export const UNKNOWN_ROOM = '00000000-0000-4000-8000-000000000000';
