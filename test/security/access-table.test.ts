/**
 * Who may do what, for every operation of spec/openapi.yaml and every kind of caller (issue 8,
 * "Access"): the owner of a room and its event, a moderator and a user invited to the event, a user
 * invited to the event and banned from its room (issue 22: as a stranger to the room, its event and
 * their data, on every path), a logged-in stranger, a guest with the room's invite code (as `InviteCode` and as `Bearer`), an
 * anonymous caller, and bearers of the owner's expired token, of a token of another issuer, of a
 * token forged with another key, of a gateway's service token, and of tokens the issuer signed that
 * are not Convene's access tokens (issue 22): the owner's token issued to another client, the
 * owner's ID token, and another client's token carrying the call-in role.
 *
 * The outcome of each cell follows from the declared table below (which schemes an operation
 * admits, and who among those it admits may), never from the server: a caller the operation's
 * scheme does not admit gets 401 with the error body and `WWW-Authenticate`; an admitted caller
 * who may not gets 404. Every refused answer must equal, status, body and headers, the answer to
 * the same request for things that do not exist, so that nobody learns that a room or an event
 * exists; a refused write leaves the database as it was. Every answer is checked against the
 * contract, and no answer shows the SIP pin, the streaming key or the room password to a caller
 * who may not see them.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openapiDocument } from '../../generated/openapi-document.js';
import type { operations as OperationTypes } from '../../generated/openapi.js';
import { operations, type OperationId } from '../../generated/operations.js';
import { feedTokenHash, newFeedToken } from '../../src/domain/calendar-feed/calendar-feeds.repository.js';
import { buildRoutes } from '../../src/http/app.js';
import { authorizationOf, createCast, createScene, PARTIES, type Cast, type Party, type Scene, type SceneOptions } from '../support/access-cast.js';
import { freshSourceAddress } from '../support/invites.js';
import { signalingConfig } from '../support/signaling.js';
import { dbOf, startTestApp, type TestApp } from '../support/test-app.js';

/** Which callers an operation's security lets in at all. */
type Admits = 'anyone' | 'users' | 'users_and_guests' | 'gateways';

type JsonBody<Op extends OperationId> = OperationTypes[Op] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

interface Request<Op extends OperationId> {
  /** Path parameters besides the scene's own (room, event, invite code, asset, target, instance). */
  params?: Record<string, string>;
  query?: string;
  body?: JsonBody<Op> | Buffer;
}

interface Rule<Op extends OperationId> {
  admits: Admits;
  /** Among the admitted users (and guests), those who may; every other admitted caller gets 404. */
  may?: readonly Party[];
  /** For an operation anyone may call: the callers who present themselves (a Bearer token) and are refused with 404. */
  refuses?: readonly Party[];
  /** The answer of success. */
  status: number;
  /**
   * The operation destroys or uses up what it acts on: a cell where it succeeds gets a scene of its
   * own. A refused cell acts on the shared scene, which it must leave as it was (checked).
   */
  fresh?: SceneOptions;
  /** Puts what the cell needs in place before it runs (and before a refused write's database state is read). */
  prepare?: () => Promise<void>;
  request?: (scene: Scene, cast: Cast) => Request<Op>;
}

const USERS = ['owner', 'moderator', 'invitee', 'banned', 'stranger'] as const;
const READERS = ['owner', 'moderator', 'invitee'] as const;
const OWNER = ['owner'] as const;
const INVITEES = ['moderator', 'invitee'] as const;
const GUESTS = ['guest', 'guest_bearer'] as const;
const SUPPRESS = 'suppress_email_notification=true';

/** The declared table: every operation of the contract (the type makes it exhaustive). */
const table: { [Op in OperationId]: Rule<Op> } = {
  get_health: { admits: 'anyone', status: 200 },
  get_ready: { admits: 'anyone', status: 200 },
  get_login_provider: { admits: 'anyone', status: 200 },
  login: { admits: 'anyone', status: 200, request: (_, c) => ({ body: { id_token: c.newcomer.idToken } }) },
  verify_invite_code: { admits: 'anyone', refuses: ['banned'], status: 201, request: (s) => ({ body: { invite_code: s.inviteCode } }) },
  start_invited_room: {
    admits: 'anyone',
    // a banned user presenting itself cannot come in as a guest; one who hides its token is an anonymous guest
    refuses: ['banned'],
    status: 200,
    request: (s, c) => ({ body: { invite_code: s.inviteCode, password: c.secrets.roomPassword } }),
  },
  start_call_in: { admits: 'gateways', status: 200, request: (s, c) => ({ body: { id: s.sipId, pin: c.secrets.pin } }) },
  get_turn_servers: { admits: 'users_and_guests', may: [...USERS, ...GUESTS], status: 200 },

  get_users: { admits: 'users', may: USERS, status: 200 },
  get_me: { admits: 'users', may: USERS, status: 200 },
  patch_me: { admits: 'users', may: USERS, status: 200, request: () => ({ body: { title: 'Dr.' } }) },
  get_my_tariff: { admits: 'users', may: USERS, status: 200 },
  find_users: { admits: 'users', may: USERS, status: 200, request: () => ({ query: 'q=Owner' }) },
  get_user: { admits: 'users', may: USERS, status: 200, request: (_, c) => ({ params: { user_id: c.owner.id } }) },

  get_rooms: { admits: 'users', may: USERS, status: 200 },
  create_room: { admits: 'users', may: USERS, status: 201, request: () => ({ body: { password: 'their-own', enable_sip: true, waiting_room: false } }) },
  get_room: { admits: 'users', may: READERS, status: 200 },
  patch_room: { admits: 'users', may: OWNER, status: 200, request: () => ({ body: { waiting_room: true } }) },
  delete_room: { admits: 'users', may: OWNER, status: 204, fresh: {} },
  get_room_tariff: { admits: 'users_and_guests', may: [...READERS, ...GUESTS], status: 200 },
  get_room_event: { admits: 'users_and_guests', may: [...READERS, ...GUESTS], status: 200 },
  start_room: { admits: 'users', may: READERS, status: 200, request: (_, c) => ({ body: { password: c.secrets.roomPassword } }) },

  get_room_invites: { admits: 'users', may: READERS, status: 200 },
  create_room_invite: { admits: 'users', may: OWNER, status: 200, request: () => ({ body: {} }) },
  get_room_invite: { admits: 'users', may: READERS, status: 200 },
  update_room_invite: { admits: 'users', may: OWNER, status: 200, request: () => ({ body: { expiration: '2031-01-01T00:00:00Z' } }) },
  delete_room_invite: { admits: 'users', may: OWNER, status: 200, fresh: {} },

  get_room_sip_config: { admits: 'users', may: OWNER, status: 200 },
  put_room_sip_config: { admits: 'users', may: OWNER, status: 200, request: () => ({ body: { lobby: true } }) },
  delete_room_sip_config: { admits: 'users', may: OWNER, status: 204, fresh: {} },

  get_room_assets: { admits: 'users', may: READERS, status: 200 },
  create_room_asset: {
    admits: 'users',
    may: OWNER,
    status: 201,
    request: () => ({ query: 'filename=agenda.txt', body: Buffer.from('agenda') }),
  },
  get_room_asset: { admits: 'users', may: READERS, status: 200 },
  delete_room_asset: { admits: 'users', may: OWNER, status: 204, fresh: { asset: true } },
  get_me_assets: { admits: 'users', may: USERS, status: 200 },

  get_room_streaming_targets: { admits: 'users', may: READERS, status: 200 },
  create_room_streaming_target: {
    admits: 'users',
    may: OWNER,
    status: 201,
    request: (_, c) => ({
      body: {
        name: 'Second channel',
        kind: 'custom',
        streaming_endpoint: 'rtmp://live.example.org/second',
        streaming_key: c.secrets.streamingKey,
        public_url: 'https://video.example.org/second',
      },
    }),
  },
  get_room_streaming_target: { admits: 'users', may: READERS, status: 200 },
  patch_room_streaming_target: { admits: 'users', may: OWNER, status: 200, request: () => ({ body: { name: 'Backup channel' } }) },
  delete_room_streaming_target: { admits: 'users', may: OWNER, status: 204, fresh: {} },

  get_events: { admits: 'users', may: USERS, status: 200 },
  create_event: {
    admits: 'users',
    may: USERS,
    status: 201,
    request: () => ({
      query: SUPPRESS,
      body: { title: 'Their own', description: '', is_time_independent: true, is_adhoc: false, waiting_room: false, show_meeting_details: false },
    }),
  },
  get_event: { admits: 'users', may: READERS, status: 200 },
  patch_event: { admits: 'users', may: OWNER, status: 200, request: () => ({ query: SUPPRESS, body: { title: 'Board meeting (agenda)' } }) },
  delete_event: { admits: 'users', may: OWNER, status: 204, fresh: {}, request: () => ({ query: SUPPRESS }) },
  get_event_instances: { admits: 'users', may: READERS, status: 200 },
  get_event_instance: { admits: 'users', may: READERS, status: 200 },
  patch_event_instance: { admits: 'users', may: OWNER, status: 200, request: () => ({ body: { title: 'Special session' } }) },
  add_event_to_favorites: { admits: 'users', may: READERS, status: 201, fresh: {} },
  remove_event_from_favorites: { admits: 'users', may: READERS, status: 204, fresh: { favorites: true } },

  create_event_invite: {
    admits: 'users',
    may: OWNER,
    status: 201,
    request: (_, c) => ({ query: SUPPRESS, body: { invitee: c.newcomer.id, role: 'user' } }),
  },
  get_event_invites: { admits: 'users', may: READERS, status: 200 },
  update_event_invite: {
    admits: 'users',
    may: OWNER,
    status: 204,
    request: (_, c) => ({ params: { user_id: c.bystander.id }, body: { role: 'moderator' } }),
  },
  delete_event_invite: {
    admits: 'users',
    may: OWNER,
    status: 204,
    fresh: {},
    request: (_, c) => ({ params: { user_id: c.bystander.id }, query: SUPPRESS }),
  },
  delete_email_event_invite: {
    admits: 'users',
    may: OWNER,
    status: 204,
    fresh: {},
    request: (_, c) => ({ query: SUPPRESS, body: { email: c.bystander.email } }),
  },
  accept_event_invite: { admits: 'users', may: INVITEES, status: 204 },
  decline_event_invite: { admits: 'users', may: INVITEES, status: 204 },

  // a feed is the user's own: only the owner has one here (ownerFeedOnly), nobody reaches another's
  get_calendar_feed: { admits: 'users', may: OWNER, status: 200, prepare: ownerFeedOnly },
  issue_calendar_feed: { admits: 'users', may: USERS, status: 201, prepare: ownerFeedOnly },
  revoke_calendar_feed: { admits: 'users', may: OWNER, status: 204, prepare: ownerFeedOnly },
  // the token is the credential: whoever has the URL reads the owner's feed, whatever else they send
  get_calendar_feed_ics: { admits: 'anyone', status: 200, prepare: ownerFeedOnly, request: () => ({ params: { token: ownerFeedToken } }) },
  // everyone lists and creates their own subscriptions; only the owner reaches the scene's
  get_webhook_subscriptions: { admits: 'users', may: USERS, status: 200 },
  create_webhook_subscription: {
    admits: 'users',
    may: USERS,
    status: 201,
    // a public address literal (no name to resolve), for an event type this table never causes: nothing is sent
    request: () => ({ body: { url: 'https://192.0.2.10/hooks', event_types: ['timer.started'] } }),
  },
  get_webhook_subscription: { admits: 'users', may: OWNER, status: 200 },
  delete_webhook_subscription: { admits: 'users', may: OWNER, status: 204, fresh: {} },
  resume_webhook_subscription: { admits: 'users', may: OWNER, status: 200 },
  get_webhook_deliveries: { admits: 'users', may: OWNER, status: 200 },
};

let ownerFeedToken = '';
/** The owner has a calendar feed (a new one each time), no other user has one. */
async function ownerFeedOnly(): Promise<void> {
  ownerFeedToken = newFeedToken();
  await dbOf(app).deleteFrom('calendar_feeds').execute();
  await dbOf(app)
    .insertInto('calendar_feeds')
    .values({ user_id: cast.owner.id, token_hash: feedTokenHash(ownerFeedToken) })
    .execute();
}

/** The parties holding a valid access token of a registered user. */
const REGISTERED: readonly Party[] = USERS;

/** What a cell must answer, from the table alone. */
function expectedStatus(rule: Rule<OperationId>, party: Party): number {
  if (rule.admits === 'anyone') return rule.refuses?.includes(party) ? 404 : rule.status;
  if (rule.admits === 'gateways') return party === 'gateway' ? rule.status : 401;
  const admitted = REGISTERED.includes(party) || ((GUESTS as readonly Party[]).includes(party) && rule.admits === 'users_and_guests');
  if (!admitted) return 401;
  return rule.may?.includes(party) ? rule.status : 404;
}

const SECURITY: Record<Admits, string[][]> = {
  anyone: [],
  users: [['BearerAuth']],
  users_and_guests: [['BearerAuth'], ['InviteCode']],
  gateways: [['ServiceToken']],
};

const app = {} as TestApp;
let cast: Cast;
let shared: Scene;
beforeAll(async () => {
  Object.assign(
    app,
    await startTestApp({
      // each request names a source address of its own (no other test's failures count); Redis when the run has it
      ...signalingConfig(),
      call_in: { tel: '+49 30 1234567' }, // event views then carry the dial-in details (the pin)
      webhooks: { max_subscriptions_per_user: 1000 }, // every party creates some, the owner one per scene too
      turn: { servers: [{ uris: ['turn:turn.example.org:3478?transport=udp'], shared_secret: 'a-shared-secret-of-the-turn-server' }] },
    }),
  );
  cast = await createCast(app);
  shared = await createScene(app, cast, { asset: true });
});
afterAll(async () => {
  await cast?.otherIssuer.close();
  await app.close?.();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const servers = openapiDocument as { servers?: { url: string }[]; paths: Record<string, { servers?: { url: string }[] }> };

/** The operation's full path, its parameters filled in; `unknown`: every uuid among them replaced by one that names nothing. */
function pathOf(operationId: OperationId, scene: Scene, request: Request<OperationId>, unknown: boolean): string {
  const { path } = operations[operationId];
  const server = (servers.paths[path]!.servers?.[0]?.url ?? servers.servers?.[0]?.url ?? '').replace(/\/$/, '');
  const params: Record<string, string | undefined> = {
    room_id: scene.roomId,
    event_id: scene.eventId,
    instance_id: scene.instanceId,
    invite_code: scene.inviteCode,
    streaming_target_id: scene.streamingTargetId,
    subscription_id: scene.webhookSubscriptionId,
    asset_id: scene.assetId,
    ...request.params,
  };
  const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${operationId}: no value for {${name}}`);
    return unknown && UUID.test(value) ? randomUUID() : value;
  });
  return `${server}${filled}${request.query ? `?${request.query}` : ''}`;
}

const hasUuidParameter = (operationId: OperationId) => /\{[^}]*(_id|invite_code)\}/.test(operations[operationId].path);

async function call(operationId: OperationId, scene: Scene, party: Party, unknown = false) {
  const request = table[operationId].request?.(scene, cast) ?? {};
  const authorization = authorizationOf(cast, scene, party);
  const { body } = request;
  const raw = Buffer.isBuffer(body);
  return app.request(operations[operationId].method.toUpperCase(), pathOf(operationId, scene, request, unknown), {
    headers: {
      ...(authorization ? { authorization } : {}),
      'x-forwarded-for': freshSourceAddress(),
      ...(body === undefined ? {} : { 'content-type': raw ? 'application/octet-stream' : 'application/json' }),
    },
    body: body === undefined ? undefined : raw ? body : JSON.stringify(body),
  });
}

/** Every header of an answer but those that differ between any two answers. */
function headersOf(res: Response): Record<string, string> {
  const headers = Object.fromEntries(res.headers);
  delete headers.date;
  delete headers['x-request-id'];
  return headers;
}

let tables: string[] | undefined;
/** Every row of every table: what a refused write must leave as it was. */
async function databaseState(): Promise<unknown> {
  const db = dbOf(app);
  tables ??= (
    await sql<{ tablename: string }>`
      select tablename from pg_tables where schemaname = current_schema() and tablename not like 'kysely\\_%' order by tablename`.execute(db)
  ).rows.map((row) => row.tablename);
  const columns = tables.map((table) => sql`(select coalesce(json_agg(t order by t::text), '[]') from ${sql.table(table)} t) as ${sql.ref(table)}`);
  return (await sql`select ${sql.join(columns)}`.execute(db)).rows[0];
}

/**
 * Which of the cast's secrets an answer shows to a party that may not see them. The owner sees
 * everything. Invitees see the room password (they need it to start the room) and, as the contract
 * gives an event's dial-in details to everyone who reads the event, the pin in `room.call_in`
 * only; nobody else sees any of them, and nobody but the owner the streaming key.
 */
function leakedSecrets(party: Party, text: string): string[] {
  if (party === 'owner' || text === '') return [];
  const invitee = (INVITEES as readonly Party[]).includes(party);
  let shown = text;
  if (invitee) {
    try {
      shown = JSON.stringify(JSON.parse(text, (key, value) => (key === 'call_in' ? { ...value, password: undefined } : value)));
    } catch {
      // not JSON (an asset's bytes): looked at as it is
    }
  }
  const { roomPassword, pin, streamingKey } = cast.secrets;
  const forbidden = [streamingKey, pin, ...(invitee ? [] : [roomPassword])];
  return forbidden.filter((secret) => shown.includes(secret));
}

const operationIds = Object.keys(operations).sort() as OperationId[];

describe('the table', () => {
  it('names every operation of the contract, with the security the contract declares', () => {
    const routes = buildRoutes(openapiDocument).list;
    expect(Object.keys(table).sort()).toEqual(operationIds);
    for (const route of routes) {
      const declared = route.security.map((requirement) => Object.keys(requirement).sort());
      expect(declared, route.operationId).toEqual(SECURITY[table[route.operationId].admits]);
    }
  });
});

describe.each(operationIds)('%s', (operationId) => {
  const rule = table[operationId] as Rule<OperationId>;
  const writes = operations[operationId].method !== 'get';

  it.each(PARTIES)('as %s', async (party) => {
    const expected = expectedStatus(rule, party);
    const refused = expected === 401 || expected === 404;
    const scene = rule.fresh && !refused ? await createScene(app, cast, rule.fresh) : shared;
    await rule.prepare?.();
    const before = refused && writes ? await databaseState() : undefined;

    const res = await call(operationId, scene, party);
    expect(res.status, res.text_).toBe(expected);

    if (expected === 401) {
      expect(JSON.parse(res.text_).code).toBe(party === 'gateway' ? 'unknown_user' : 'unauthorized');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    if (expected === 404) expect(JSON.parse(res.text_).code).toBe('not_found');
    if (refused) {
      if (before) expect(await databaseState(), 'a refused write changed the database').toEqual(before);
      if (hasUuidParameter(operationId)) {
        const nothing = await call(operationId, scene, party, true);
        expect({ status: nothing.status, body: nothing.text_, headers: headersOf(nothing) }).toEqual({
          status: res.status,
          body: res.text_,
          headers: headersOf(res),
        });
      }
    } else {
      expect(leakedSecrets(party, res.text_), res.text_).toEqual([]);
    }
  });
});

describe('a banned invitee', () => {
  /** The ids an answer of a listing names, as `party` lists them (first page, 100 to a page). */
  async function listed(path: string, party: 'invitee' | 'banned'): Promise<string[]> {
    const res = await app.request('GET', `/v1${path}?per_page=100`, { headers: { authorization: `Bearer ${cast[party].accessToken}` } });
    expect(res.status, res.text_).toBe(200);
    return (JSON.parse(res.text_) as { id: string }[]).map((item) => item.id);
  }

  // the other cells only look for secrets in a listing; here the room, the event and their people
  it.each([
    ['/rooms', () => shared.roomId],
    ['/events', () => shared.eventId],
    ['/users', () => cast.owner.id],
  ])('finds nothing of the room in %s, where an invitee finds it', async (path, id) => {
    expect(await listed(path, 'invitee')).toContain(id());
    expect(await listed(path, 'banned')).not.toContain(id());
  });
});
