/**
 * Who may do what with an event (docs/architecture.md §5): its creator everything; an invitee, whatever the
 * invite's status, may read it, its occurrences and favorite it; a stranger (another logged-in
 * user) gets 404 as if it did not exist; an anonymous caller 401.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventInviteStatus } from '../../../src/db/schema.js';
import { startTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { createEvent, invite, send, timedBody, type Event } from '../../support/events.js';

const STATUSES: EventInviteStatus[] = ['pending', 'accepted', 'tentative', 'declined'];
const INSTANCE = '20261201T090000Z'; // the single occurrence of timedBody()

let app: TestApp;
let creator: TestUser;
let stranger: TestUser;
const invitees = new Map<EventInviteStatus, TestUser>();
beforeAll(async () => {
  app = await startTestApp();
  creator = await app.login('creator');
  stranger = await app.login('stranger');
  for (const status of STATUSES) invitees.set(status, await app.login(`invitee-${status}`));
});
afterAll(() => app?.close());

/** A fresh event of the creator with one invitee per status. */
async function freshEvent(): Promise<Event> {
  const event = await createEvent(app, creator, timedBody(), '?suppress_email_notification=true');
  for (const [status, user] of invitees) await invite(app, event.id, creator, user, status);
  return event;
}

interface Operation {
  name: string;
  /** Readers (creator and invitees) may call it; otherwise only the creator. */
  read: boolean;
  success: number;
  /** Prepares what the call needs from `user` (e.g. a favorite to remove). */
  setup?: (event: Event, user: TestUser) => Promise<void>;
  call: (eventId: string, token?: string) => ReturnType<typeof send>;
}

const operations: Operation[] = [
  { name: 'get_event', read: true, success: 200, call: (id, token) => send(app, 'GET', `/events/${id}`, { token }) },
  { name: 'get_event_instances', read: true, success: 200, call: (id, token) => send(app, 'GET', `/events/${id}/instances`, { token }) },
  { name: 'get_event_instance', read: true, success: 200, call: (id, token) => send(app, 'GET', `/events/${id}/instances/${INSTANCE}`, { token }) },
  { name: 'add_event_to_favorites', read: true, success: 201, call: (id, token) => send(app, 'PUT', `/users/me/event_favorites/${id}`, { token }) },
  {
    name: 'remove_event_from_favorites',
    read: true,
    success: 204,
    setup: async (event, user) => {
      await app.convene.database.db.insertInto('event_favorites').values({ user_id: user.id, event_id: event.id }).execute();
    },
    call: (id, token) => send(app, 'DELETE', `/users/me/event_favorites/${id}`, { token }),
  },
  { name: 'patch_event', read: false, success: 200, call: (id, token) => send(app, 'PATCH', `/events/${id}`, { token, body: { title: 'Changed' } }) },
  {
    name: 'patch_event_instance',
    read: false,
    success: 200,
    call: (id, token) => send(app, 'PATCH', `/events/${id}/instances/${INSTANCE}`, { token, body: { status: 'cancelled' } }),
  },
  { name: 'delete_event', read: false, success: 204, call: (id, token) => send(app, 'DELETE', `/events/${id}?suppress_email_notification=true`, { token }) },
];

describe.each(operations)('$name', (op) => {
  it('answers the creator', async () => {
    const event = await freshEvent();
    await op.setup?.(event, creator);
    const res = await op.call(event.id, creator.accessToken);
    expect(res.status, JSON.stringify(res.json)).toBe(op.success);
  });

  it.each(STATUSES)(`answers an invitee whose invite is %s ${op.read ? 'as a reader' : 'with 404'}`, async (status) => {
    const event = await freshEvent();
    const user = invitees.get(status)!;
    await op.setup?.(event, user);
    const res = await op.call(event.id, user.accessToken);
    expect(res.status, JSON.stringify(res.json)).toBe(op.read ? op.success : 404);
    // a refused write changed nothing
    if (!op.read) expect((await send(app, 'GET', `/events/${event.id}`, { token: creator.accessToken })).json.title).toBe(event.title);
  });

  it('answers a stranger 404, as if the event did not exist', async () => {
    const event = await freshEvent();
    await op.setup?.(event, stranger);
    const res = await op.call(event.id, stranger.accessToken);
    expect(res.status).toBe(404);
    expect(res.json.code).toBe('not_found');
  });

  it('answers an anonymous caller 401', async () => {
    const event = await freshEvent();
    const res = await op.call(event.id);
    expect(res.status).toBe(401);
  });

  it('answers 400 for an event id that is not a uuid and 404 for an unknown one', async () => {
    expect((await op.call('not-a-uuid', creator.accessToken)).status).toBe(400);
    expect((await op.call('00000000-0000-4000-8000-000000000000', creator.accessToken)).status).toBe(404);
  });
});

describe('what an invitee sees', () => {
  it.each(STATUSES)('an invitee whose invite is %s reads their status and may not edit', async (status) => {
    const event = await freshEvent();
    const res = await send(app, 'GET', `/events/${event.id}`, { token: invitees.get(status)!.accessToken });
    expect(res.json).toMatchObject({ id: event.id, invite_status: status, can_edit: false, created_by: { id: creator.id } });
  });
});

describe('get_events visibility', () => {
  it('lists an event to its creator and every invitee, not to a stranger, and refuses anonymous callers', async () => {
    const event = await freshEvent();
    const idsOf = async (user: TestUser) =>
      ((await send(app, 'GET', '/events?per_page=100', { token: user.accessToken })).json as Event[]).map((e) => [e.id, e.invite_status]);
    expect(await idsOf(creator)).toContainEqual([event.id, 'accepted']);
    for (const [status, user] of invitees) expect(await idsOf(user)).toContainEqual([event.id, status]);
    expect((await idsOf(stranger)).map(([id]) => id)).not.toContain(event.id);
    expect((await send(app, 'GET', '/events')).status).toBe(401);
  });

  it('refuses anonymous creation', async () => {
    expect((await send(app, 'POST', '/events', { body: timedBody() })).status).toBe(401);
  });
});
