/**
 * Every guessable secret Convene rate limits, as one table for the rate-limit tests: room passwords
 * (start_room, and start_invited_room for a code's holder), invite codes in a body (start_invited_room,
 * verify_invite_code) and in `Authorization` (get_turn_servers as `Bearer <code>`, get_room_tariff and
 * get_room_event as `InviteCode <code>`), and call-in pins (start_call_in). Each guess names its
 * operation, the status of a wrong guess and of the right one, what its budgets are, and sends
 * either from a chosen source address (the instances trust one proxy hop: X-Forwarded-For). Beside
 * the guesser's right guess, each names an honest party's (`honest`), which no stranger's failures
 * may refuse. Answers are checked against the contract on the way.
 */
import { expect } from 'vitest';

import { openapiDocument } from '../../../generated/openapi-document.js';
import { operations, type OperationId } from '../../../generated/operations.js';
import type { Config } from '../../../src/config/schema.js';
import {
  insertInvite,
  insertRoom,
  insertSipConfig,
  inviteToRoomEvent,
  post,
  signalingConfig,
  startCallIn,
  startInvited,
  startRoom,
  type Answer,
} from '../../support/signaling.js';
import { dbOf, type TestApp, type TestUser } from '../../support/test-app.js';

export const PASSWORD = 'correct-horse';

/** What an instance of these tests needs besides `signalingConfig`: a TURN server, so that guests get 200 from /turn. */
export const rateLimitedConfig = (rateLimits: Config['rate_limits']) => ({
  ...signalingConfig(rateLimits),
  turn: { servers: [{ uris: ['turn:turn.example.org:3478?transport=udp'], shared_secret: 'a-shared-secret' }] },
});

/**
 * The targets of one test: a room with a password, two invitees of its event, two invite codes, a
 * call-in id and pin, and another room's call-in id and pin.
 */
export interface Scene {
  invitee: TestUser;
  /** Another invitee of the room: honest, and sharing no budget with `invitee`. */
  otherInvitee: TestUser;
  owner: TestUser;
  roomId: string;
  code: string;
  /** Another code of the room, for an honest guest. */
  otherCode: string;
  /** A well-formed code no invite has: the target of the wrong codes. */
  unknownCode: string;
  sip: { id: string; pin: string };
  /** Another room's call-in id and pin: dialled through the same gateway. */
  otherSip: { id: string; pin: string };
  gateway: string;
}

let people = 0;
/**
 * An owner and two invitees with names (and so subjects and tokens) of their own: an instance other
 * than the one they log in on may still hold an earlier test's user behind the same token for a few
 * seconds (its per-token cache), and the database is emptied between tests.
 */
export async function loginPair(app: TestApp): Promise<[TestUser, TestUser, TestUser]> {
  const n = ++people;
  return Promise.all([app.login(`owner${n}`), app.login(`invitee${n}`), app.login(`other${n}`)]);
}

export async function createScene(app: TestApp, owner: TestUser, invitee: TestUser, otherInvitee: TestUser): Promise<Scene> {
  const roomId = await insertRoom(app, owner, PASSWORD);
  await inviteToRoomEvent(app, roomId, owner, invitee);
  const event = await dbOf(app).selectFrom('events').select('id').where('room_id', '=', roomId).executeTakeFirstOrThrow();
  await dbOf(app).insertInto('event_invites').values({ event_id: event.id, invitee: otherInvitee.id, created_by: owner.id }).execute();
  const otherRoomId = await insertRoom(app, owner, PASSWORD);
  const [code, otherCode, sip, otherSip, gateway] = await Promise.all([
    insertInvite(app, roomId, owner),
    insertInvite(app, roomId, owner),
    insertSipConfig(app, roomId),
    insertSipConfig(app, otherRoomId),
    app.issuer.serviceToken(['call-in']),
  ]);
  return { invitee, otherInvitee, owner, roomId, code, otherCode, unknownCode: crypto.randomUUID(), sip, otherSip, gateway };
}

export interface Guess {
  name: string;
  operationId: OperationId;
  /** What a wrong guess counts against (kinds are counted apart): room password, invite code, call-in pin. */
  kind: 'pw' | 'invite' | 'pin';
  /** Whether a guarded check that passes (the invite code) precedes it: its attempts in flight may refuse some guesses first. */
  afterAnotherGuard?: true;
  /** The status of a wrong guess (compared and counted), and of the right one. */
  failure: number;
  success: number;
  /**
   * Whether its failures count per source address. A call-in pin's do not: the gateway's address is
   * every caller's; its only budget is the call-in id's (`failures_per_target`).
   */
  perSource: boolean;
  /**
   * Whether `right` shares the wrong guesses' target budget: a room password guessed by the same
   * account or code, a pin at the same call-in id; not so for an invite code (the target is the
   * code guessed, and the right one is another).
   */
  sameTarget: boolean;
  /** A wrong guess by the guesser (the scene's invitee, a code's holder, a gateway's caller). */
  wrong(app: TestApp, scene: Scene, source: string): Promise<Answer>;
  /** The right guess by the same guesser (the same account or code, the same call-in id). */
  right(app: TestApp, scene: Scene, source: string): Promise<Answer>;
  /**
   * The right guess of someone else, which nobody's failures at `wrong`'s target may refuse: another
   * invitee of the room, a guest with another code of it, the holder of the right code, a caller of
   * another room through the same gateway.
   */
  honest(app: TestApp, scene: Scene, source: string): Promise<Answer>;
}

/** How many failures of `guess` one source gets in a window. */
export const sourceBudget = (guess: Guess, limits: Config['rate_limits']) =>
  guess.perSource ? Math.min(limits.failures_per_source, limits.failures_per_target) : limits.failures_per_target;

/** A GET with a whole `Authorization` value from `source`, checked against the contract. */
async function get(app: TestApp, path: string, authorization: string, source: string): Promise<Answer> {
  const res = await app.request('GET', path, { headers: { authorization, 'x-forwarded-for': source } });
  return { status: res.status, body: res.text_ ? JSON.parse(res.text_) : undefined, headers: res.headers };
}

const wrongPin = (pin: string) => (pin === '0000000000' ? '1111111111' : '0000000000');
const asInvitee = (scene: Scene, password: string, source: string) => ({ token: scene.invitee.accessToken, body: { password }, source });
const asOtherInvitee = (scene: Scene, source: string) => ({ token: scene.otherInvitee.accessToken, body: { password: PASSWORD }, source });
const verify = (app: TestApp, invite_code: string, source: string) => post(app, '/v1/invite/verify', { body: { invite_code }, source });

export const guesses: Guess[] = [
  {
    name: 'room password (start_room)',
    operationId: 'start_room',
    kind: 'pw',
    failure: 401,
    success: 200,
    perSource: true,
    sameTarget: true, // the room, for this invitee
    wrong: (app, s, source) => startRoom(app, s.roomId, asInvitee(s, 'wrong', source)),
    right: (app, s, source) => startRoom(app, s.roomId, asInvitee(s, PASSWORD, source)),
    honest: (app, s, source) => startRoom(app, s.roomId, asOtherInvitee(s, source)),
  },
  {
    name: 'invite code in the body (start_invited_room)',
    operationId: 'start_invited_room',
    kind: 'invite',
    failure: 404,
    success: 200,
    perSource: true,
    sameTarget: false, // the code guessed
    wrong: (app, s, source) => startInvited(app, s.roomId, { invite_code: s.unknownCode, password: PASSWORD }, source),
    right: (app, s, source) => startInvited(app, s.roomId, { invite_code: s.code, password: PASSWORD }, source),
    honest: (app, s, source) => startInvited(app, s.roomId, { invite_code: s.otherCode, password: PASSWORD }, source),
  },
  {
    name: 'room password of a code holder (start_invited_room)',
    operationId: 'start_invited_room',
    kind: 'pw',
    afterAnotherGuard: true,
    failure: 401,
    success: 200,
    perSource: true,
    sameTarget: true, // the room, for this code
    wrong: (app, s, source) => startInvited(app, s.roomId, { invite_code: s.code, password: 'wrong' }, source),
    right: (app, s, source) => startInvited(app, s.roomId, { invite_code: s.code, password: PASSWORD }, source),
    honest: (app, s, source) => startInvited(app, s.roomId, { invite_code: s.otherCode, password: PASSWORD }, source),
  },
  {
    name: 'invite code in the body (verify_invite_code)',
    operationId: 'verify_invite_code',
    kind: 'invite',
    failure: 404,
    success: 201,
    perSource: true,
    sameTarget: false, // the code guessed
    wrong: (app, s, source) => verify(app, s.unknownCode, source),
    right: (app, s, source) => verify(app, s.code, source),
    honest: (app, s, source) => verify(app, s.otherCode, source),
  },
  {
    name: 'invite code as Bearer (get_turn_servers)',
    operationId: 'get_turn_servers',
    kind: 'invite',
    failure: 401,
    success: 200,
    perSource: true,
    sameTarget: false, // the code guessed
    wrong: (app, s, source) => get(app, '/v1/turn', `Bearer ${s.unknownCode}`, source),
    right: (app, s, source) => get(app, '/v1/turn', `Bearer ${s.code}`, source),
    honest: (app, s, source) => get(app, '/v1/turn', `Bearer ${s.otherCode}`, source),
  },
  {
    name: 'invite code as InviteCode (get_room_tariff)',
    operationId: 'get_room_tariff',
    kind: 'invite',
    failure: 401,
    success: 200,
    perSource: true,
    sameTarget: false, // the code guessed
    wrong: (app, s, source) => get(app, `/v1/rooms/${s.roomId}/tariff`, `InviteCode ${s.unknownCode}`, source),
    right: (app, s, source) => get(app, `/v1/rooms/${s.roomId}/tariff`, `InviteCode ${s.code}`, source),
    honest: (app, s, source) => get(app, `/v1/rooms/${s.roomId}/tariff`, `InviteCode ${s.otherCode}`, source),
  },
  {
    name: 'invite code as InviteCode (get_room_event)',
    operationId: 'get_room_event',
    kind: 'invite',
    failure: 401,
    success: 200,
    perSource: true,
    sameTarget: false, // the code guessed
    wrong: (app, s, source) => get(app, `/v1/rooms/${s.roomId}/event`, `InviteCode ${s.unknownCode}`, source),
    right: (app, s, source) => get(app, `/v1/rooms/${s.roomId}/event`, `InviteCode ${s.code}`, source),
    honest: (app, s, source) => get(app, `/v1/rooms/${s.roomId}/event`, `InviteCode ${s.otherCode}`, source),
  },
  {
    name: 'call-in pin (start_call_in)',
    operationId: 'start_call_in',
    kind: 'pin',
    failure: 400,
    success: 200,
    perSource: false,
    sameTarget: true, // the call-in id
    wrong: (app, s, source) => startCallIn(app, s.gateway, { id: s.sip.id, pin: wrongPin(s.sip.pin) }, source),
    right: (app, s, source) => startCallIn(app, s.gateway, { id: s.sip.id, pin: s.sip.pin }, source),
    honest: (app, s, source) => startCallIn(app, s.gateway, s.otherSip, source),
  },
];

/** Follows `$ref`s inside the contract. */
function resolve(node: any): any {
  while (node && typeof node.$ref === 'string') {
    node = node.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((o: any, k: string) => o?.[k], openapiDocument);
  }
  return node;
}

/**
 * A 429 as the contract has it for `operationId` (the body is checked by the test app already): the
 * error body with code `too_many_requests`, and every header the contract declares for it (Retry-After:
 * whole seconds, at least 1), here also at most the window.
 */
export function expectTooMany(answer: Answer<any>, operationId: OperationId, windowSeconds: number): number {
  expect(answer.status, JSON.stringify(answer.body)).toBe(429);
  expect(answer.body).toMatchObject({ code: 'too_many_requests', status: '429', documentation_url: '/docs#error-too_many_requests' });
  expect(answer.body.message).toEqual(expect.any(String));
  const { method, path } = operations[operationId];
  const declared = resolve(openapiDocument.paths[path][method].responses['429']);
  const headers = Object.entries<any>(declared?.headers ?? {});
  expect(headers.map(([name]) => name.toLowerCase())).toContain('retry-after');
  for (const [name, header] of headers) {
    const schema = resolve(resolve(header).schema);
    const value = answer.headers.get(name);
    expect(value, `${operationId} 429 ${name}`).toMatch(/^\d+$/);
    expect(schema.type).toBe('integer');
    expect(Number(value)).toBeGreaterThanOrEqual(schema.minimum ?? 0);
  }
  const retryAfter = Number(answer.headers.get('retry-after'));
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  return retryAfter;
}

/** Fires `count` requests at once and sorts the answers by status. */
export async function burst(count: number, send: (i: number) => Promise<Answer>): Promise<Map<number, Answer[]>> {
  const answers = await Promise.all(Array.from({ length: count }, (_, i) => send(i)));
  const byStatus = new Map<number, Answer[]>();
  for (const answer of answers) byStatus.set(answer.status, [...(byStatus.get(answer.status) ?? []), answer]);
  return byStatus;
}

/** The statuses of a burst with their counts, for one readable assertion. */
export const tally = (byStatus: Map<number, Answer[]>) => Object.fromEntries([...byStatus].map(([status, answers]) => [status, answers.length]));

/** The failures of a burst, every other answer being a 429 as the contract has it. */
export function failuresOf(guess: Guess, windowSeconds: number, byStatus: Map<number, Answer[]>): number {
  const others = [...byStatus.keys()].filter((status) => status !== guess.failure && status !== 429);
  expect(others, JSON.stringify(tally(byStatus))).toEqual([]);
  for (const refused of byStatus.get(429) ?? []) expectTooMany(refused, guess.operationId, windowSeconds);
  return byStatus.get(guess.failure)?.length ?? 0;
}

/** Sends wrong guesses one by one until one is refused: the failures that the budget still had. */
export async function failuresLeft(guess: Guess, windowSeconds: number, send: () => Promise<Answer>): Promise<number> {
  for (let failures = 0; failures <= 1000; failures++) {
    const answer = await send();
    if (answer.status !== guess.failure) {
      expectTooMany(answer, guess.operationId, windowSeconds);
      return failures;
    }
  }
  throw new Error(`${guess.name}: no refusal after 1000 failures`);
}
