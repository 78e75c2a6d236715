/**
 * PostgreSQL stopped mid-run (issue 8, faults). One Convene instance runs on a PostgreSQL server of
 * the test's own (test/support/private-postgres.ts), which the test stops and starts again twice,
 * never restarting Convene:
 *
 *  1. A fast shutdown. Every operation of the contract that needs the database answers 503
 *     `service_unavailable` with the error body, at once (a hang fails the test), `/health` 503 with
 *     its Health body, and a signaling opening 503; a socket opened before stays open. When the
 *     server is back, the same instance answers 200 again, reads give exactly what was written
 *     before the stop, and writes and signaling joins work.
 *  2. An immediate shutdown (a crash: no checkpoint, the WAL replayed at the next start) in the
 *     middle of a stream of writes. Every answer is 201 or 503, never a 500 or a hang, and every
 *     write answered 201 is there after the restart.
 *
 * Faults injected per run: 2. The test brings its own server, so it runs in both CI passes; without
 * the PostgreSQL binaries it is skipped with the reason.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { OperationId } from '../../generated/operations.js';
import { validateHandshakeError } from '../../generated/signaling/validators.js';
import { connectSignaling, SignalingConnectError, type SignalingConnection } from '../../packages/client/src/index.js';
import { loadConfig } from '../../src/config/load.js';
import { createConvene, type Convene } from '../../src/server.js';
import { checkResponse } from '../support/contract.js';
import { startTestIssuer, type TestIssuer } from '../support/oidc-issuer.js';
import { privatePostgresUnavailable, startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js';
import { recordUnhandledErrors } from '../support/unhandled-errors.js';

const unavailable = privatePostgresUnavailable();
if (unavailable) console.warn(`test/faults/postgres-restart.test.ts skipped: ${unavailable}`);

/** A stopped server refuses connections at once: an answer slower than this is a hang in the making. */
const ANSWER_WITHIN_MS = 5_000;
/** How long the authenticated-user cache keeps a user (users.service.ts); after it every caller is looked up in the database. */
const USER_CACHE_MS = 2_000;
const SUPPRESS = { suppress_email_notification: 'true' };

interface Probe {
  method: string;
  /** From the host root: `/health`, `/v1/…`. */
  path: string;
  token?: string;
  query?: Record<string, string>;
  json?: unknown;
  bytes?: Buffer;
}

interface Answer {
  status: number;
  body: any;
  ms: number;
}

interface Person {
  id: string;
  email: string;
  idToken: string;
  token: string;
}

/** What the test writes before the first stop; the probes use real ids. */
interface Scene {
  owner: Person;
  invitee: Person;
  gatewayToken: string;
  eventId: string;
  /** The event's room: SIP, invite code, streaming target and asset are there. */
  roomId: string;
  instanceId: string;
  inviteCode: string;
  sip: { id: string; pin: string };
  streamingTargetId: string;
  assetId: string;
  /** The secret of the owner's calendar feed. */
  feedToken: string;
  webhookSubscriptionId: string;
}

let postgres: PrivatePostgres | undefined;
let issuer: TestIssuer | undefined;
/** The instance's query timeout here: a frozen server's requests fail after it (production: 15 s). */
const QUERY_TIMEOUT_MS = 1_000;
let convene: Convene | undefined;
let baseUrl = '';
const sockets: SignalingConnection[] = [];
const unhandled = recordUnhandledErrors();

beforeAll(async () => {
  if (unavailable) return;
  postgres = await startPrivatePostgres();
  issuer = await startTestIssuer({ clientId: 'convene' });
  const config = loadConfig({
    file: false,
    env: {},
    overrides: {
      http: { host: '127.0.0.1', port: 0 },
      database: { url: postgres.url, query_timeout_ms: QUERY_TIMEOUT_MS },
      oidc: { issuer: issuer.issuer, client_id: 'convene', authorized_parties: ['convene', 'gateway'] }, // the web app's client and the gateway's
      dev: { identity_provider: false },
      logging: { level: 'silent' },
    },
  });
  // Convene opens (and owns) the pool itself, as in production
  convene = await createConvene(config, { logger: pino({ level: 'silent' }) });
  const address = await convene.listen(0, '127.0.0.1');
  baseUrl = `http://127.0.0.1:${address.port}`;
}, 60_000);

afterAll(async () => {
  // every step even when one before it failed, so that no server outlives the test
  try {
    await Promise.allSettled(sockets.map((socket) => socket.close()));
    await convene?.close();
  } finally {
    try {
      await issuer?.close();
    } finally {
      await postgres?.destroy();
    }
  }
}, 60_000);

/** A request, its answer checked against the contract and timed; it fails after 15 s (a hang). */
async function call(operationId: OperationId, probe: Probe): Promise<Answer> {
  const url = new URL(probe.path, baseUrl);
  for (const [name, value] of Object.entries(probe.query ?? {})) url.searchParams.set(name, value);
  const headers: Record<string, string> = {};
  if (probe.token) headers.authorization = `Bearer ${probe.token}`;
  if (probe.json !== undefined) headers['content-type'] = 'application/json';
  if (probe.bytes) headers['content-type'] = 'application/octet-stream';
  const started = performance.now();
  const res = await fetch(url, {
    method: probe.method,
    headers,
    body: probe.bytes ?? (probe.json === undefined ? undefined : JSON.stringify(probe.json)),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  checkResponse(operationId, { status: res.status, contentType: res.headers.get('content-type'), body: text });
  const json = res.headers.get('content-type')?.startsWith('application/json');
  return { status: res.status, body: json && text ? JSON.parse(text) : text, ms };
}

/** `call` that must succeed with `status`; the body is returned. */
async function must(operationId: OperationId, probe: Probe, status: number): Promise<any> {
  const answer = await call(operationId, probe);
  if (answer.status !== status) throw new Error(`${operationId} answered ${answer.status}, not ${status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

async function login(name: string): Promise<Person> {
  const email = `${name}@example.test`;
  const sub = `sub-${name}`;
  const idToken = await issuer!.idToken({ sub, email, given_name: name, family_name: 'Tester' });
  await must('login', { method: 'POST', path: '/v1/auth/login', json: { id_token: idToken } }, 200);
  const token = await issuer!.accessToken({ sub });
  const me = await must('get_me', { method: 'GET', path: '/v1/users/me', token }, 200);
  return { id: me.id, email, idToken, token };
}

/** A public address literal (nothing to resolve) and an event type this test never causes: nothing is sent. */
const WEBHOOK = { url: 'https://192.0.2.10/hooks', event_types: ['timer.started'] };

async function writeScene(): Promise<Scene> {
  const owner = await login('owner');
  const invitee = await login('invitee');
  const event = await must(
    'create_event',
    {
      method: 'POST',
      path: '/v1/events',
      token: owner.token,
      query: SUPPRESS,
      json: {
        title: 'Planning',
        description: 'Plans for the coming week.',
        is_time_independent: false,
        is_all_day: false,
        starts_at: { datetime: '2030-03-04T09:00:00Z', timezone: 'Europe/Berlin' },
        ends_at: { datetime: '2030-03-04T10:00:00Z', timezone: 'Europe/Berlin' },
        recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=4'],
      },
    },
    201,
  );
  const eventPath = `/v1/events/${event.id}`;
  const roomPath = `/v1/rooms/${event.room.id}`;
  const instances = await must('get_event_instances', { method: 'GET', path: `${eventPath}/instances`, token: owner.token }, 200);
  await must(
    'create_event_invite',
    { method: 'POST', path: `${eventPath}/invites`, token: owner.token, query: SUPPRESS, json: { invitee: invitee.id, role: 'user' } },
    201,
  );
  const invite = await must('create_room_invite', { method: 'POST', path: `${roomPath}/invites`, token: owner.token, json: {} }, 200);
  const sip = await must('get_room_sip_config', { method: 'GET', path: `${roomPath}/sip`, token: owner.token }, 200);
  const target = await must(
    'create_room_streaming_target',
    {
      method: 'POST',
      path: `${roomPath}/streaming_targets`,
      token: owner.token,
      json: {
        name: 'Channel',
        kind: 'custom',
        streaming_endpoint: 'rtmp://live.example.org/app',
        streaming_key: 'key',
        public_url: 'https://video.example.org/app',
      },
    },
    201,
  );
  const asset = await must(
    'create_room_asset',
    { method: 'POST', path: `${roomPath}/assets`, token: owner.token, query: { filename: 'agenda.txt' }, bytes: Buffer.from('1. faults') },
    201,
  );
  await must('create_room', { method: 'POST', path: '/v1/rooms', token: owner.token, json: { enable_sip: false, password: 'secret' } }, 201);
  const feed = await must('issue_calendar_feed', { method: 'POST', path: '/v1/users/me/calendar_feed', token: owner.token }, 201);
  const subscription = await must('create_webhook_subscription', { method: 'POST', path: '/v1/webhook_subscriptions', token: owner.token, json: WEBHOOK }, 201);
  return {
    owner,
    invitee,
    gatewayToken: await issuer!.serviceToken(['call-in']),
    eventId: event.id,
    roomId: event.room.id,
    instanceId: instances[0].instance_id,
    inviteCode: invite.invite_code,
    sip: { id: sip.sip_id, pin: sip.password },
    streamingTargetId: target.id,
    assetId: asset.id,
    feedToken: new URL(feed.url).pathname.split('/')[3]!,
    webhookSubscriptionId: subscription.id,
  };
}

/** Everything the scene wrote, as the API reads it back. */
async function readBack(s: Scene): Promise<Record<string, unknown>> {
  const token = s.owner.token;
  const room = `/v1/rooms/${s.roomId}`;
  const reads: [OperationId, string][] = [
    ['get_me', '/v1/users/me'],
    ['get_rooms', '/v1/rooms'],
    ['get_events', '/v1/events'],
    ['get_event', `/v1/events/${s.eventId}`],
    ['get_event_invites', `/v1/events/${s.eventId}/invites`],
    ['get_room_invites', `${room}/invites`],
    ['get_room_sip_config', `${room}/sip`],
    ['get_room_streaming_targets', `${room}/streaming_targets`],
    ['get_room_assets', `${room}/assets`],
    ['get_room_asset', `${room}/assets/${s.assetId}`],
    ['get_me_assets', '/v1/users/me/assets'],
    ['get_calendar_feed', '/v1/users/me/calendar_feed'],
  ];
  const found: Record<string, unknown> = {};
  for (const [operationId, path] of reads) found[operationId] = await must(operationId, { method: 'GET', path, token }, 200);
  return found;
}

/** One request for every operation of the contract (the type makes a new operation fail to compile until it has one). */
function probes(s: Scene): Record<OperationId, Probe> {
  const owner = s.owner.token;
  const room = `/v1/rooms/${s.roomId}`;
  const event = `/v1/events/${s.eventId}`;
  const subscription = `/v1/webhook_subscriptions/${s.webhookSubscriptionId}`;
  const asOwner = (method: string, path: string, more: Partial<Probe> = {}): Probe => ({ method, path, token: owner, ...more });
  return {
    get_health: { method: 'GET', path: '/health' },
    get_ready: { method: 'GET', path: '/ready' },
    get_login_provider: { method: 'GET', path: '/v1/auth/login' },
    login: { method: 'POST', path: '/v1/auth/login', json: { id_token: s.owner.idToken } },
    get_users: asOwner('GET', '/v1/users'),
    get_me: asOwner('GET', '/v1/users/me'),
    patch_me: asOwner('PATCH', '/v1/users/me', { json: { title: 'Dr.' } }),
    get_my_tariff: asOwner('GET', '/v1/users/me/tariff'),
    find_users: asOwner('GET', '/v1/users/find', { query: { q: 'invitee' } }),
    get_user: asOwner('GET', `/v1/users/${s.invitee.id}`),
    get_turn_servers: asOwner('GET', '/v1/turn'),
    get_rooms: asOwner('GET', '/v1/rooms'),
    create_room: asOwner('POST', '/v1/rooms', { json: { enable_sip: false } }),
    get_room: asOwner('GET', room),
    patch_room: asOwner('PATCH', room, { json: { waiting_room: true } }),
    delete_room: asOwner('DELETE', room),
    get_room_tariff: asOwner('GET', `${room}/tariff`),
    get_room_event: asOwner('GET', `${room}/event`),
    start_room: asOwner('POST', `${room}/start`, { json: {} }),
    start_invited_room: { method: 'POST', path: `${room}/start_invited`, json: { invite_code: s.inviteCode } },
    start_call_in: { method: 'POST', path: '/v1/services/call_in/start', token: s.gatewayToken, json: { id: s.sip.id, pin: s.sip.pin } },
    get_room_invites: asOwner('GET', `${room}/invites`),
    create_room_invite: asOwner('POST', `${room}/invites`, { json: {} }),
    get_room_invite: asOwner('GET', `${room}/invites/${s.inviteCode}`),
    update_room_invite: asOwner('PUT', `${room}/invites/${s.inviteCode}`, { json: { expiration: '2031-01-01T00:00:00Z' } }),
    delete_room_invite: asOwner('DELETE', `${room}/invites/${s.inviteCode}`),
    verify_invite_code: { method: 'POST', path: '/v1/invite/verify', json: { invite_code: s.inviteCode } },
    get_room_sip_config: asOwner('GET', `${room}/sip`),
    put_room_sip_config: asOwner('PUT', `${room}/sip`, { json: { lobby: true } }),
    delete_room_sip_config: asOwner('DELETE', `${room}/sip`),
    get_room_assets: asOwner('GET', `${room}/assets`),
    create_room_asset: asOwner('POST', `${room}/assets`, { query: { filename: 'minutes.txt' }, bytes: Buffer.from('minutes') }),
    get_room_asset: asOwner('GET', `${room}/assets/${s.assetId}`),
    delete_room_asset: asOwner('DELETE', `${room}/assets/${s.assetId}`),
    get_me_assets: asOwner('GET', '/v1/users/me/assets'),
    get_room_streaming_targets: asOwner('GET', `${room}/streaming_targets`),
    create_room_streaming_target: asOwner('POST', `${room}/streaming_targets`, {
      json: { name: 'Second', kind: 'custom', streaming_endpoint: 'rtmp://live.example.org/second', public_url: 'https://video.example.org/second' },
    }),
    get_room_streaming_target: asOwner('GET', `${room}/streaming_targets/${s.streamingTargetId}`),
    patch_room_streaming_target: asOwner('PATCH', `${room}/streaming_targets/${s.streamingTargetId}`, { json: { name: 'Backup' } }),
    delete_room_streaming_target: asOwner('DELETE', `${room}/streaming_targets/${s.streamingTargetId}`),
    get_events: asOwner('GET', '/v1/events'),
    create_event: asOwner('POST', '/v1/events', { query: SUPPRESS, json: { title: 'Retro', description: 'What went well.', is_time_independent: true } }),
    get_event: asOwner('GET', event),
    patch_event: asOwner('PATCH', event, { query: SUPPRESS, json: { title: 'Planning (agenda)' } }),
    delete_event: asOwner('DELETE', event, { query: SUPPRESS }),
    get_event_instances: asOwner('GET', `${event}/instances`),
    get_event_instance: asOwner('GET', `${event}/instances/${s.instanceId}`),
    patch_event_instance: asOwner('PATCH', `${event}/instances/${s.instanceId}`, { json: { title: 'Special session' } }),
    add_event_to_favorites: asOwner('PUT', `/v1/users/me/event_favorites/${s.eventId}`),
    remove_event_from_favorites: asOwner('DELETE', `/v1/users/me/event_favorites/${s.eventId}`),
    create_event_invite: asOwner('POST', `${event}/invites`, { query: SUPPRESS, json: { email: 'someone@example.test', role: 'user' } }),
    get_event_invites: asOwner('GET', `${event}/invites`),
    update_event_invite: asOwner('PATCH', `${event}/invites/${s.invitee.id}`, { json: { role: 'moderator' } }),
    delete_event_invite: asOwner('DELETE', `${event}/invites/${s.invitee.id}`, { query: SUPPRESS }),
    delete_email_event_invite: asOwner('DELETE', `${event}/invites/email`, { query: SUPPRESS, json: { email: s.invitee.email } }),
    accept_event_invite: { method: 'PATCH', path: `${event}/invite`, token: s.invitee.token },
    decline_event_invite: { method: 'DELETE', path: `${event}/invite`, token: s.invitee.token },
    get_calendar_feed: asOwner('GET', '/v1/users/me/calendar_feed'),
    issue_calendar_feed: asOwner('POST', '/v1/users/me/calendar_feed'),
    revoke_calendar_feed: asOwner('DELETE', '/v1/users/me/calendar_feed'),
    get_calendar_feed_ics: { method: 'GET', path: `/v1/calendar_feeds/${s.feedToken}/meetings.ics` },
    get_webhook_subscriptions: asOwner('GET', '/v1/webhook_subscriptions'),
    create_webhook_subscription: asOwner('POST', '/v1/webhook_subscriptions', { json: WEBHOOK }),
    get_webhook_subscription: asOwner('GET', subscription),
    delete_webhook_subscription: asOwner('DELETE', subscription),
    resume_webhook_subscription: asOwner('POST', `${subscription}/resume`),
    get_webhook_deliveries: asOwner('GET', `${subscription}/deliveries`),
  };
}

/** Operations that answer without the database: their answer while it is down. */
const WITHOUT_DATABASE: Partial<Record<OperationId, number>> = { get_login_provider: 200 };

async function ticketFor(token: string, roomId: string): Promise<string> {
  return (await must('start_room', { method: 'POST', path: `/v1/rooms/${roomId}/start`, token, json: {} }, 200)).ticket;
}

async function openSocket(ticket: string): Promise<SignalingConnection> {
  const socket = await connectSignaling({ url: baseUrl, ticket, WebSocket, validate: true });
  sockets.push(socket);
  return socket;
}

/** Polls `/health` until it answers 200; fails after `withinMs`. Returns how long it took. */
async function waitForHealth(withinMs: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    const health = await call('get_health', { method: 'GET', path: '/health' });
    if (health.status === 200) return performance.now() - started;
    if (performance.now() - started > withinMs) throw new Error(`/health still answers ${health.status} after ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

describe.skipIf(unavailable !== undefined)('PostgreSQL stopped mid-run', () => {
  let scene: Scene;
  let written: Record<string, unknown>;

  it('a fast shutdown: 503 with the error body for every operation that needs the database, /health 503, then recovery without a restart and nothing lost', async () => {
    scene = await writeScene();
    written = await readBack(scene);
    // a participant in the event's room, and a ticket kept for an opening while the database is away
    const ownerSocket = await openSocket(await ticketFor(scene.owner.token, scene.roomId));
    expect((await ownerSocket.join('Owner', { timeoutMs: 5_000 })).result).toBe('join_success');
    const keptTicket = await ticketFor(scene.owner.token, scene.roomId);
    const lastRequest = performance.now();

    await postgres!.stop('fast');
    // the callers of the last requests are still in the user cache: past it, every request needs the database
    await sleep(lastRequest + USER_CACHE_MS + 100 - performance.now());

    const wrong: string[] = [];
    for (const [operationId, probe] of Object.entries(probes(scene)) as [OperationId, Probe][]) {
      const answer = await call(operationId, probe);
      const expected = WITHOUT_DATABASE[operationId] ?? 503;
      if (answer.status !== expected) wrong.push(`${operationId}: ${answer.status} ${JSON.stringify(answer.body)}`);
      else if (answer.ms > ANSWER_WITHIN_MS) wrong.push(`${operationId}: answered after ${Math.round(answer.ms)} ms`);
      else if (operationId === 'get_health') expect(answer.body).toEqual({ status: 'unavailable', database: 'down' });
      else if (expected === 503) expect(answer.body, operationId).toMatchObject({ code: 'service_unavailable', status: '503' });
    }
    expect(wrong).toEqual([]);

    // the opening takes the ticket, then cannot read its room: 503, as in the HTTP API
    const refused = await openSocket(keptTicket).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(SignalingConnectError);
    const refusal = refused as SignalingConnectError;
    expect(refusal.status).toBe(503);
    expect(validateHandshakeError(refusal.body), JSON.stringify(validateHandshakeError.errors)).toBe(true);
    expect(refusal.body).toMatchObject({ code: 'service_unavailable', status: '503' });

    // the socket opened before stays open and answers (echo needs no database)
    const echoed = ownerSocket.next('echo', '*', { timeoutMs: 3_000 });
    ownerSocket.send('echo', { action: 'ping', during: 'outage' });
    expect((await echoed).payload).toEqual({ action: 'ping', during: 'outage' });

    await postgres!.start();
    await waitForHealth(15_000);
    // what was written before the stop reads back unchanged
    expect(await readBack(scene)).toEqual(written);
    // writes work again through the same pool
    const room = await must('create_room', { method: 'POST', path: '/v1/rooms', token: scene.owner.token, json: { enable_sip: false } }, 201);
    await must('patch_room', { method: 'PATCH', path: `/v1/rooms/${room.id}`, token: scene.owner.token, json: { waiting_room: true } }, 200);
    expect(await must('get_room', { method: 'GET', path: `/v1/rooms/${room.id}`, token: scene.owner.token }, 200)).toMatchObject({ waiting_room: true });
    // and signaling: the invitee joins the room the owner never left
    const joined = ownerSocket.next('control', 'joined', { timeoutMs: 5_000 });
    const inviteeSocket = await openSocket(await ticketFor(scene.invitee.token, scene.roomId));
    const answer = await inviteeSocket.join('Invitee', { timeoutMs: 5_000 });
    expect(answer.result).toBe('join_success');
    expect((await joined).payload.control.display_name).toBe('Invitee');
    expect((await ownerSocket.close()).code).toBe(1000);
    await inviteeSocket.close();
    expect(unhandled.map(String)).toEqual([]);
  }, 60_000);

  it('an immediate shutdown during writes: each answer 201 or 503 (never 500, never a hang), and every 201 is there after the restart', async () => {
    const token = scene.owner.token;
    const created: string[] = [];
    const wrong: string[] = [];
    let stopped = false;
    let refusedSinceStop = 0;
    /** One writer: rooms one after another until the server has been away for a while. */
    const writer = async () => {
      while (!stopped || refusedSinceStop < 20) {
        const answer = await call('create_room', { method: 'POST', path: '/v1/rooms', token, json: { enable_sip: false } });
        if (answer.ms > ANSWER_WITHIN_MS) wrong.push(`answered after ${Math.round(answer.ms)} ms`);
        if (answer.status === 201) created.push(answer.body.id);
        else if (answer.status === 503 && answer.body.code === 'service_unavailable') {
          if (stopped) refusedSinceStop++;
        } else wrong.push(`${answer.status} ${JSON.stringify(answer.body)}`);
        if (wrong.length > 0) return;
      }
    };
    const writers = [writer(), writer(), writer()];
    while (created.length < 10 && wrong.length === 0) await sleep(10);
    await postgres!.stop('immediate');
    stopped = true;
    await Promise.all(writers);
    expect(wrong).toEqual([]);
    expect(refusedSinceStop).toBeGreaterThanOrEqual(20);

    await postgres!.start();
    await waitForHealth(15_000);
    const missing: string[] = [];
    for (const id of created) {
      const answer = await call('get_room', { method: 'GET', path: `/v1/rooms/${id}`, token });
      if (answer.status !== 200) missing.push(`${id}: ${answer.status}`);
    }
    expect(missing).toEqual([]);
    // and what the first part wrote is still there after the crash
    expect((await readBack(scene)).get_event).toEqual(written.get_event);
    await must('create_room', { method: 'POST', path: '/v1/rooms', token, json: { enable_sip: false } }, 201);
    // a server gone in the middle of queries must not take the process with it
    expect(unhandled.map(String)).toEqual([]);
  }, 60_000);

  it('a frozen server (connections open, nothing answers): 503 within the query timeout, never a hang, /health 503, and on as before once it answers', async () => {
    const token = scene.owner.token;
    await must('get_rooms', { method: 'GET', path: '/v1/rooms', token }, 200); // the pool holds open connections
    postgres!.freeze();
    try {
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => call('create_room', { method: 'POST', path: '/v1/rooms', token, json: { enable_sip: false } })),
      );
      for (const answer of answers) {
        expect(answer).toMatchObject({ status: 503, body: { code: 'service_unavailable' } });
        expect(answer.ms).toBeLessThan(QUERY_TIMEOUT_MS + 2_000);
      }
      const health = await fetch(new URL('/health', baseUrl), { signal: AbortSignal.timeout(10_000) });
      expect(health.status).toBe(503);
      expect(await health.json()).toEqual({ status: 'unavailable', database: 'down' });
    } finally {
      postgres!.thaw();
    }
    await waitForHealth(15_000);
    await must('create_room', { method: 'POST', path: '/v1/rooms', token, json: { enable_sip: false } }, 201);
    expect(unhandled.map(String)).toEqual([]);
  }, 60_000);
});
