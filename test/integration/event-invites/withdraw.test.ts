/**
 * delete_event_invite and delete_email_event_invite: the invitation goes, with the uninvited
 * user's favorite of the event (and nobody else's), and by address both kinds of invitation go,
 * together with the room invite code mailed to an external address.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { createEvent, inviteesOfEvent, inviteOps, storedInvite, useExternalInvites, type TestEvent } from '../../support/event-invites.js';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const app = useTestApp();
const external = useExternalInvites(app);
let ada: TestUser;
let bob: TestUser;
let carol: TestUser;
let event: TestEvent;
beforeEach(async () => {
  [ada, bob, carol] = await Promise.all([app.login('ada'), app.login('bob'), app.login('carol')]);
  event = await createEvent(app, ada);
});

const db = () => app.convene.database.db;
const invite = async (body: unknown) => expect((await inviteOps.create_event_invite(external, event.id, { token: ada.accessToken, body })).status).toBe(201);
const favorite = (user: TestUser, eventId = event.id) => db().insertInto('event_favorites').values({ user_id: user.id, event_id: eventId }).execute();
const favoritesOf = (user: TestUser) => db().selectFrom('event_favorites').select('event_id').where('user_id', '=', user.id).execute();
const byEmail = (email: unknown, query?: string) => inviteOps.delete_email_event_invite(app, event.id, { token: ada.accessToken, body: { email }, query });

describe('delete_event_invite', () => {
  it("withdraws the invitation and the user's favorite of this event only", async () => {
    const other = await createEvent(app, ada, 'Other meeting');
    await invite({ invitee: bob.id });
    await invite({ invitee: carol.id });
    await favorite(bob);
    await favorite(bob, other.id);
    await favorite(carol);
    await favorite(ada);

    const res = await inviteOps.delete_event_invite(app, event.id, bob.id, { token: ada.accessToken });
    expect(res.status, res.text_).toBe(204);
    expect(res.text_).toBe('');
    expect(await storedInvite(app, event.id, bob.id)).toBeUndefined();
    expect(await favoritesOf(bob)).toEqual([{ event_id: other.id }]);
    expect(await favoritesOf(carol)).toEqual([{ event_id: event.id }]);
    expect(await favoritesOf(ada)).toEqual([{ event_id: event.id }]);
    expect((await inviteesOfEvent(app, event.id, ada.accessToken)).map((i) => i.profile.id)).toEqual([carol.id]);
  });

  it('answers 404 the second time, for the creator and for a user who was never invited', async () => {
    await invite({ invitee: bob.id });
    expect((await inviteOps.delete_event_invite(app, event.id, bob.id, { token: ada.accessToken })).status).toBe(204);
    for (const userId of [bob.id, ada.id, carol.id]) {
      const res = await inviteOps.delete_event_invite(app, event.id, userId, { token: ada.accessToken });
      expect(res.status).toBe(404);
      expect(JSON.parse(res.text_).code).toBe('not_found');
    }
  });

  it('refuses a user id that is no uuid and a suppress_email_notification that is no boolean', async () => {
    await invite({ invitee: bob.id });
    expect((await inviteOps.delete_event_invite(app, event.id, 'bob', { token: ada.accessToken })).status).toBe(400);
    const bad = await inviteOps.delete_event_invite(app, event.id, bob.id, { token: ada.accessToken, query: 'suppress_email_notification=2' });
    expect(bad.status).toBe(400);
    expect(await storedInvite(app, event.id, bob.id)).toBeDefined();
  });
});

describe('delete_email_event_invite', () => {
  it('withdraws an e-mail invitation, whatever the case of the address, and deactivates its invite code', async () => {
    await invite({ email: 'zoe@elsewhere.test' });
    await invite({ email: 'yan@elsewhere.test' });
    const [{ room_invite_code: code }] = (await db()
      .selectFrom('event_email_invites')
      .select('room_invite_code')
      .where('email', '=', 'zoe@elsewhere.test')
      .execute()) as [{ room_invite_code: string }];

    const res = await byEmail('ZOE@Elsewhere.test');
    expect(res.status, res.text_).toBe(204);
    expect((await inviteesOfEvent(app, event.id, ada.accessToken)).map((i) => i.profile.email)).toEqual(['yan@elsewhere.test']);
    const room = await db().selectFrom('room_invites').select(['code', 'active']).where('room_id', '=', event.roomId).orderBy('created_at').execute();
    expect(room).toEqual([
      { code, active: false },
      { code: expect.any(String), active: true },
    ]);
  });

  it('withdraws the invitation of the registered user with that address as well', async () => {
    // an e-mail invitation made before the address was registered, and a user invitation of its owner
    await invite({ email: 'zoe@elsewhere.test' });
    const zoe = await app.login('zoe-late', { email: 'other@elsewhere.test' });
    await db().updateTable('users').set({ email: 'Zoe@Elsewhere.test' }).where('id', '=', zoe.id).execute();
    await invite({ invitee: zoe.id });
    await favorite(zoe);
    expect(await inviteesOfEvent(app, event.id, ada.accessToken)).toHaveLength(2);

    expect((await byEmail('zoe@elsewhere.test')).status).toBe(204);
    expect(await inviteesOfEvent(app, event.id, ada.accessToken)).toEqual([]);
    expect(await favoritesOf(zoe)).toEqual([]);
  });

  it("withdraws a registered user's invitation by their address alone", async () => {
    await invite({ invitee: bob.id });
    await invite({ invitee: carol.id });
    expect((await byEmail(bob.email.toUpperCase())).status).toBe(204);
    expect((await inviteesOfEvent(app, event.id, ada.accessToken)).map((i) => i.profile.id)).toEqual([carol.id]);
  });

  it('answers 404 when nothing was invited under the address', async () => {
    await invite({ invitee: bob.id });
    for (const email of [carol.email, ada.email, 'nobody@elsewhere.test']) {
      const res = await byEmail(email);
      expect(res.status, email).toBe(404);
      expect(JSON.parse(res.text_).code).toBe('not_found');
    }
    expect(await storedInvite(app, event.id, bob.id)).toBeDefined();
  });

  it('answers 404 for an address invited to another event only', async () => {
    const other = await createEvent(app, ada, 'Other meeting');
    await inviteOps.create_event_invite(external, other.id, { token: ada.accessToken, body: { email: 'zoe@elsewhere.test' } });
    expect((await byEmail('zoe@elsewhere.test')).status).toBe(404);
    expect(await inviteesOfEvent(app, other.id, ada.accessToken)).toHaveLength(1);
  });

  it.each([
    ['an invalid address', 'not-an-address'],
    ['an empty address', ''],
    ['an address that is no string', 42],
  ])('refuses %s with 400', async (_case, email) => {
    const res = await byEmail(email);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text_).code).toBe('validation_failed');
  });

  it('refuses an address of 255 characters, and looks one of 254 up', async () => {
    const local = 'a'.repeat(64);
    const address = (length: number) => `${local}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(length - 64 - 1 - 63 - 1 - 63 - 1 - 4)}.org`;
    expect(address(254)).toHaveLength(254);
    expect((await byEmail(address(254))).status).toBe(404);
    const tooLong = await byEmail(address(255));
    expect(tooLong.status).toBe(400);
    expect(JSON.parse(tooLong.text_).errors).toContainEqual(expect.objectContaining({ field: 'email', code: 'invalid_length' }));
  });

  it('refuses a missing body, a body without email and malformed JSON', async () => {
    const run = (init: { body?: unknown; rawBody?: string }) => inviteOps.delete_email_event_invite(app, event.id, { token: ada.accessToken, ...init });
    expect((await run({})).status).toBe(400);
    expect((await run({ body: {} })).status).toBe(400);
    const malformed = await run({ rawBody: '{"email"' });
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.text_).code).toBe('invalid_json');
  });
});
