/**
 * Fixtures of the event-invitation tests (test/integration/event-invites): events written straight
 * into the database (so these tests do not depend on the event operations), invitations in a given
 * state, and requests of the seven invite operations with any token, body and query.
 */
import { afterEach, beforeEach } from 'vitest';
import type { EventInviteRole, EventInviteStatus } from '../../src/db/schema.js';
import type { TestApp, TestUser } from './test-app.js';

/**
 * Registers hooks giving each test another instance of `app` (same database) where external
 * addresses may be invited, closed after the test: one per test, as each instance caches the users
 * of its requests and every test registers new ones. Call after `useTestApp`.
 */
export function useExternalInvites(app: TestApp): TestApp {
  const external = {} as TestApp;
  beforeEach(async () => {
    Object.assign(external, await app.withConfig({ endpoints: { event_invite_external_email_address: true } }));
  });
  afterEach(() => external.close?.());
  return external;
}

export interface TestEvent {
  id: string;
  roomId: string;
}

/**
 * An event of `creator` with its own room: time independent, or (`timed`) a one-hour meeting a day
 * from now in Europe/Berlin, which is what calendar attachments need.
 */
export async function createEvent(app: TestApp, creator: TestUser, title = 'Weekly sync', { timed = false } = {}): Promise<TestEvent> {
  const db = app.convene.database.db;
  const room = await db.insertInto('rooms').values({ created_by: creator.id }).returning('id').executeTakeFirstOrThrow();
  const start = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 86_400_000);
  const times = timed
    ? {
        is_time_independent: false,
        is_all_day: false,
        starts_at: start,
        starts_at_tz: 'Europe/Berlin',
        ends_at: new Date(start.getTime() + 3_600_000),
        ends_at_tz: 'Europe/Berlin',
        duration_secs: 3600,
      }
    : { is_time_independent: true, is_all_day: null };
  const event = await db
    .insertInto('events')
    .values({ room_id: room.id, created_by: creator.id, updated_by: creator.id, title, ...times })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: event.id, roomId: room.id };
}

/** An invitation of `user` in the given state, written directly (for access tests of answered invites). */
export async function inviteDirectly(
  app: TestApp,
  event: TestEvent,
  creator: TestUser,
  user: TestUser,
  { role = 'user', status = 'pending', createdAt }: { role?: EventInviteRole; status?: EventInviteStatus; createdAt?: Date } = {},
): Promise<void> {
  await app.convene.database.db
    .insertInto('event_invites')
    .values({ event_id: event.id, invitee: user.id, role, status, created_by: creator.id, ...(createdAt && { created_at: createdAt }) })
    .execute();
}

export interface InviteRequest {
  token?: string;
  body?: unknown;
  /** A raw body, sent as is (malformed JSON). */
  rawBody?: string;
  query?: string;
}

/** A raw request with an optional Bearer token and JSON body; the answer is checked against the contract. */
export function send(app: TestApp, method: string, path: string, { token, body, rawBody, query }: InviteRequest = {}) {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
  if (payload !== undefined) headers['content-type'] = 'application/json';
  return app.request(method, `/v1${path}${query ? `?${query}` : ''}`, { headers, body: payload });
}

/** The seven operations of the `event_invites` tag, by operationId. */
export const inviteOps = {
  create_event_invite: (app: TestApp, eventId: string, r: InviteRequest) => send(app, 'POST', `/events/${eventId}/invites`, r),
  get_event_invites: (app: TestApp, eventId: string, r: InviteRequest = {}) => send(app, 'GET', `/events/${eventId}/invites`, r),
  update_event_invite: (app: TestApp, eventId: string, userId: string, r: InviteRequest) => send(app, 'PATCH', `/events/${eventId}/invites/${userId}`, r),
  delete_event_invite: (app: TestApp, eventId: string, userId: string, r: InviteRequest = {}) => send(app, 'DELETE', `/events/${eventId}/invites/${userId}`, r),
  delete_email_event_invite: (app: TestApp, eventId: string, r: InviteRequest) => send(app, 'DELETE', `/events/${eventId}/invites/email`, r),
  accept_event_invite: (app: TestApp, eventId: string, r: InviteRequest = {}) => send(app, 'PATCH', `/events/${eventId}/invite`, r),
  decline_event_invite: (app: TestApp, eventId: string, r: InviteRequest = {}) => send(app, 'DELETE', `/events/${eventId}/invite`, r),
};

/** The invitees list as the creator (or `token`) sees it, first page of 100. */
export async function inviteesOfEvent(app: TestApp, eventId: string, token: string) {
  const res = await inviteOps.get_event_invites(app, eventId, { token, query: 'per_page=100' });
  if (res.status !== 200) throw new Error(`get_event_invites answered ${res.status}: ${res.text_}`);
  return JSON.parse(res.text_) as Array<{ profile: { kind: string; id?: string; email: string; role: string }; status: string }>;
}

/** The invite status and role of `user` for the event, straight from the database (undefined: not invited). */
export function storedInvite(app: TestApp, eventId: string, userId: string) {
  return app.convene.database.db
    .selectFrom('event_invites')
    .select(['role', 'status'])
    .where('event_id', '=', eventId)
    .where('invitee', '=', userId)
    .executeTakeFirst();
}
