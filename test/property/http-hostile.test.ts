/**
 * Generated hostile input for every operation of spec/openapi.yaml (issue 8): requests derived
 * from the contract's schemas and mutated one way each (test/support/hostile/http-requests.ts:
 * wrong types, missing and unknown fields, limits at the edge and one beyond, megabyte strings,
 * Unicode with lone surrogates, NUL, bad uuids, dates and cursors, wrong content types, duplicate
 * query parameters, malformed JSON, wrong methods, garbage credentials), sent as the owner of a
 * real room and event (so they reach validation and the handlers), and now and then as a stranger,
 * a guest, nobody, or the bearer of a token the issuer signed that is not Convene's access token
 * (the owner's ID token, a token issued to another client: always 401, issue 22).
 *
 * Whatever comes, the answer is never a 5xx and never a hang; every refusal carries the error body
 * (docs/architecture.md §4) with its status; every answer to an operation matches the contract for that
 * operation and status; and a refused request leaves every row of every table as it was. A request
 * that succeeds may change the database: the fingerprint is taken anew, and when the success used
 * up the fixtures (a deletion, a new pin, a changed password …) they are made anew.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { OperationId } from '../../generated/operations.js';
import { openapiDocument } from '../../generated/openapi-document.js';
import { buildRoutes } from '../../src/http/app.js';
import { createCast, createScene, type Cast, type Scene } from '../support/access-cast.js';
import { checkResponse } from '../support/contract.js';
import { databaseFingerprint, type Fingerprint } from '../support/hostile/db-fingerprint.js';
import {
  contractOperations,
  hostileRequests,
  MISAIMED,
  RawBody,
  render,
  type HostileRequest,
  type OperationShape,
  type RequestBase,
} from '../support/hostile/http-requests.js';
import { sendRaw, type RawResponse } from '../support/hostile/raw-http.js';
import { propertyRuns } from '../support/hostile/runs.js';
import type { SchemaSource } from '../support/hostile/schema-values.js';
import { freshSourceAddress } from '../support/invites.js';
import { signalingConfig } from '../support/signaling.js';
import { dbOf, startTestApp, type TestApp } from '../support/test-app.js';

const { runs, parameters } = propertyRuns(60);
const UPLOAD_LIMIT = 65_536;
const SUPPRESS = { suppress_email_notification: 'true' };

/** What each operation accepts for the fixtures: the base every request of it is a mutation of. */
function baseOf(operationId: OperationId, scene: Scene, cast: Cast): RequestBase {
  const path = {
    room_id: scene.roomId,
    event_id: scene.eventId,
    instance_id: scene.instanceId,
    invite_code: scene.inviteCode,
    streaming_target_id: scene.streamingTargetId,
    asset_id: scene.assetId ?? '',
    subscription_id: scene.webhookSubscriptionId,
    user_id: operationId === 'get_user' ? cast.owner.id : cast.bystander.id,
  };
  const bases: Partial<Record<OperationId, Omit<RequestBase, 'path'>>> = {
    login: { body: { id_token: cast.newcomer.idToken } },
    verify_invite_code: { body: { invite_code: scene.inviteCode } },
    start_invited_room: { body: { invite_code: scene.inviteCode, password: cast.secrets.roomPassword } },
    start_call_in: { body: { id: scene.sipId, pin: cast.secrets.pin } },
    patch_me: { body: { title: 'Dr.' } },
    find_users: { query: { q: 'Owner' } },
    create_room: { body: { password: 'their-own', enable_sip: true, waiting_room: false } },
    // an address literal (TEST-NET-3): no name to resolve, and no event this test causes is sent to it
    create_webhook_subscription: { body: { url: 'https://203.0.113.10/hooks', event_types: ['timer.started'] } },
    patch_room: { body: { waiting_room: true } },
    start_room: { body: { password: cast.secrets.roomPassword } },
    create_room_invite: { body: {} },
    update_room_invite: { body: { expiration: '2031-01-01T00:00:00Z' } },
    put_room_sip_config: { body: { lobby: true } },
    create_room_asset: { query: { filename: 'agenda.txt' }, body: Buffer.from('agenda') },
    create_room_streaming_target: {
      body: {
        name: 'Second channel',
        kind: 'custom',
        streaming_endpoint: 'rtmp://live.example.org/second',
        streaming_key: 'second-key',
        public_url: 'https://video.example.org/second',
      },
    },
    patch_room_streaming_target: { body: { name: 'Backup channel' } },
    create_event: {
      query: SUPPRESS,
      body: {
        title: 'Planning',
        description: 'Plans for the coming week.',
        is_time_independent: false,
        is_all_day: false,
        starts_at: { datetime: '2030-03-04T09:00:00Z', timezone: 'Europe/Berlin' },
        ends_at: { datetime: '2030-03-04T10:00:00Z', timezone: 'Europe/Berlin' },
        recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=4'],
      },
    },
    patch_event: { query: SUPPRESS, body: { title: 'Board meeting (agenda)' } },
    delete_event: { query: SUPPRESS },
    patch_event_instance: { body: { title: 'Special session' } },
    create_event_invite: { query: SUPPRESS, body: { invitee: cast.newcomer.id, role: 'user' } },
    update_event_invite: { body: { role: 'moderator' } },
    delete_event_invite: { query: SUPPRESS },
    delete_email_event_invite: { query: SUPPRESS, body: { email: cast.bystander.email } },
  };
  return { path, ...bases[operationId] };
}

/**
 * Successes after which the fixtures no longer serve as a base (the thing is gone, its secret
 * changed, the invitation withdrawn): they are made anew before the next request.
 */
const USES_UP_FIXTURES = new Set<OperationId>([
  'delete_room',
  'delete_event',
  'patch_event',
  'patch_room',
  'delete_room_invite',
  'update_room_invite',
  'put_room_sip_config',
  'delete_room_sip_config',
  'delete_room_asset',
  'delete_room_streaming_target',
  'update_event_invite',
  'delete_event_invite',
  'delete_email_event_invite',
]);

/** The contract, and the ids of the fixtures as they are now, for `format: uuid` values. */
const source: SchemaSource = {
  root: openapiDocument,
  knownIds: () => [
    ...[cast.owner, cast.stranger, cast.newcomer, cast.bystander].map((user) => user.id),
    ...[scene.roomId, scene.eventId, scene.inviteCode, scene.streamingTargetId, scene.assetId].filter((id) => id !== undefined),
  ],
};

const routes = buildRoutes(openapiDocument).table;
const operations = contractOperations().sort((a, b) => a.operationId.localeCompare(b.operationId));

const app = {} as TestApp;
let cast: Cast;
let scene: Scene;
let cursors: string[];
let fingerprint: () => Promise<Fingerprint>;
let lastFingerprint: Fingerprint;
const statuses = new Map<number, number>();
const started = Date.now();

beforeAll(async () => {
  Object.assign(
    app,
    await startTestApp({
      ...signalingConfig(), // each request comes from an address of its own; Redis when the run has it
      call_in: { tel: '+49 30 1234567' },
      turn: { servers: [{ uris: ['turn:turn.example.org:3478?transport=udp'], shared_secret: 'a-shared-secret-of-the-turn-server' }] },
      assets: { max_upload_bytes: UPLOAD_LIMIT },
    }),
  );
  cast = await createCast(app);
  scene = await createScene(app, cast, { asset: true, favorites: true });
  cursors = await realCursors();
  fingerprint = databaseFingerprint(dbOf(app));
  lastFingerprint = await fingerprint();
});

// tokens live 5 minutes, a long run (FC_RUNS) longer: each operation's property gets fresh ones
beforeEach(async () => {
  for (const user of [cast.owner, cast.stranger]) user.accessToken = await app.issuer.accessToken({ sub: `sub-${user.name}` });
  cast.tokens.gateway = await app.issuer.serviceToken(['call-in']);
  cast.tokens.other_client = await app.issuer.bad.otherClient('access', { sub: `sub-${cast.owner.name}` });
  cast.tokens.other_client_gateway = await app.issuer.bad.otherClient('access', { sub: 'service-account-gateway', realm_access: { roles: ['call-in'] } });
  cast.tokens.id_token = await app.issuer.idToken({ sub: `sub-${cast.owner.name}`, email: cast.owner.email });
  cast.newcomer.idToken = await app.issuer.idToken({ sub: 'sub-newcomer', email: cast.newcomer.email, given_name: 'Newcomer', family_name: 'Tester' });
});

afterAll(async () => {
  const answers = [...statuses]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status}×${count}`)
    .join(' ');
  const cases = [...statuses.values()].reduce((sum, count) => sum + count, 0);
  console.info(`http-hostile: ${cases} requests in ${((Date.now() - started) / 1000).toFixed(1)} s (${runs} per operation): ${answers}`);
  await cast?.otherIssuer.close();
  await app.close?.();
});

/** A cursor of the events list and one of an event's instances, from their `rel="after"` links. */
async function realCursors(): Promise<string[]> {
  await createScene(app, cast); // a second event, so the list has a second page
  const found: string[] = [];
  for (const path of ['/v1/events?per_page=1', `/v1/events/${scene.eventId}/instances?per_page=1`]) {
    const res = await app.request('GET', path, { headers: { authorization: `Bearer ${cast.owner.accessToken}` } });
    const after = /[?&]after=([^&>]+)/.exec(res.headers.get('link') ?? '')?.[1];
    if (!after) throw new Error(`${path} gave no cursor: ${res.headers.get('link')}`);
    found.push(decodeURIComponent(after));
  }
  return found;
}

function authorizationOf(request: HostileRequest, op: OperationShape): string | undefined {
  switch (request.caller) {
    case 'member':
      return op.schemes.includes('ServiceToken') ? `Bearer ${cast.tokens.gateway}` : `Bearer ${cast.owner.accessToken}`;
    case 'stranger':
      return `Bearer ${cast.stranger.accessToken}`;
    case 'guest':
      return `InviteCode ${scene.inviteCode}`;
    case 'garbage':
      return request.authorization;
    case 'other_client':
      return `Bearer ${op.schemes.includes('ServiceToken') ? cast.tokens.other_client_gateway : cast.tokens.other_client}`;
    case 'id_token':
      return `Bearer ${cast.tokens.id_token}`;
    case 'anonymous':
      return undefined;
  }
}

const ERROR_CODE = /^[a-z][a-z0-9_]*$/;

/** Headers some refusals must carry: the challenge of a 401, the methods of a 405, the wait of a 429. */
const REFUSAL_HEADERS: Record<number, string> = { 401: 'www-authenticate', 405: 'allow', 429: 'retry-after' };

/**
 * The error body of docs/architecture.md §4, whatever the route (a mutated path may match none): code,
 * message, documentation_url, and the status as a string; and the header the status calls for.
 */
function expectErrorBody(res: RawResponse, context: string): void {
  expect(res.contentType, context).toMatch(/^application\/json/);
  const body = JSON.parse(res.text) as Record<string, unknown>;
  expect(body, context).toMatchObject({
    code: expect.stringMatching(ERROR_CODE),
    message: expect.any(String),
    documentation_url: expect.any(String),
    status: String(res.status),
  });
  const header = REFUSAL_HEADERS[res.status];
  if (header) expect(res.headers[header], `${header}: ${context}`).toBeTruthy();
}

/** Names the tables whose rows differ. */
function changedTables(before: Fingerprint, after: Fingerprint): string[] {
  return Object.keys(after).filter((table) => before[table] !== after[table]);
}

async function check(op: OperationShape, request: HostileRequest): Promise<number> {
  const raw = render(op, request);
  const authorization = authorizationOf(request, op);
  raw.headers['x-forwarded-for'] = freshSourceAddress();
  if (authorization !== undefined) raw.headers.authorization = authorization;
  const res = await sendRaw(app.url, raw);
  const context = `${request.mutation}: ${raw.method} ${raw.target.slice(0, 300)} → ${res.status} ${res.text.slice(0, 500)}`;

  expect(res.status, context).toBeLessThan(500);
  if (res.status >= 400) expectErrorBody(res, context);
  if (MISAIMED.includes(request.caller) && request.mutation === 'none') expect(res.status, `a token not meant for Convene: ${context}`).toBe(401);
  const matched = routes.match(raw.method, raw.target.split('?')[0]!).route;
  if (matched) checkResponse(matched.operationId, { status: res.status, contentType: res.contentType, body: res.text });

  const after = await fingerprint();
  if (res.status >= 400) {
    expect(changedTables(lastFingerprint, after), `a refused request changed the database: ${context}`).toEqual([]);
  } else {
    lastFingerprint = after;
    if (matched && USES_UP_FIXTURES.has(matched.operationId)) {
      scene = await createScene(app, cast, { asset: true, favorites: true });
      lastFingerprint = await fingerprint();
    }
  }
  return res.status;
}

describe('hostile requests', () => {
  it('cover every operation of the contract', () => {
    expect(operations.map((op) => op.operationId)).toEqual(
      buildRoutes(openapiDocument)
        .list.map((r) => r.operationId)
        .sort(),
    );
  });

  describe.each(operations)('$operationId', (op) => {
    it(
      `never answer 5xx, always the error body, per the contract, and leave the database as it was when refused (${runs} cases)`,
      async () => {
        const requests = hostileRequests(op, () => ({
          base: baseOf(op.operationId, scene, cast),
          setting: {
            source,
            cursors,
            limits: { json: app.config.http.body_limit_bytes, upload: UPLOAD_LIMIT },
          },
        }));
        await fc.assert(
          fc.asyncProperty(requests, async (request) => {
            const status = await check(op, request);
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
          }),
          parameters,
        );
      },
      Math.max(120_000, runs * 1_000),
    );
  });
});

describe('inputs the property once found failing, each checked on its own', () => {
  it('answers a JSON body nested 50,000 levels deep without a 5xx (the text scan once recursed until the stack overflowed)', async () => {
    const op = operations.find((o) => o.operationId === 'patch_me')!;
    const deep = new RawBody(Buffer.from(`{"title":"Dr.","a":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`), 'deeply nested objects');
    const request: HostileRequest = {
      operationId: 'patch_me',
      caller: 'member',
      method: 'PATCH',
      segments: {},
      query: [],
      contentType: 'application/json',
      body: deep,
      mutation: 'deep',
    };
    expect(await check(op, request)).toBeLessThan(500);
  });

  it('ignores an oversize body sent to an operation that takes none (it was parsed, and answered 413, which its contract lacks)', async () => {
    const op = operations.find((o) => o.operationId === 'get_rooms')!;
    const oversize = new RawBody(Buffer.from(`"${'x'.repeat(app.config.http.body_limit_bytes)}"`), 'oversize');
    const request: HostileRequest = {
      operationId: 'get_rooms',
      caller: 'member',
      method: 'GET',
      segments: {},
      query: [],
      contentType: 'application/json',
      body: oversize,
      mutation: 'oversize',
    };
    expect(await check(op, request)).toBe(200);
  });
});
