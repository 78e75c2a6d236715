/**
 * The event fields the 2024 web app sends and reads back (issue 16): `show_meeting_details` (stored,
 * returned on every event, and deciding whether `GET /rooms/{room_id}/event` carries the meeting
 * details, for owner, invitee and guest alike), `streaming_targets` (created on the event's room,
 * replaced by an update, listed by every event, the key for the owner only) and
 * `has_shared_folder` (`true` refused with 400: there is no shared-folder storage).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { createEvent, invite, send, timedBody, timeIndependentBody, type Event } from '../../support/events.js';
import { freshSourceAddress, insertInvite } from '../../support/invites.js';
import { dbOf, TARGET } from '../../support/room-content.js';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const TEL = '+49 30 1234567';
const app = useTestApp({ call_in: { tel: TEL }, http: { trust_proxy: 1 } });
let owner: TestUser;
let invitee: TestUser;
let stranger: TestUser;
beforeEach(async () => {
  [owner, invitee, stranger] = [await app.login('owner'), await app.login('invitee'), await app.login('stranger')];
});

const SECOND = { ...TARGET, name: 'Backup channel', streaming_key: 'an0ther-k3y', public_url: 'https://video.example.org/backup' };
const withoutKey = ({ streaming_key: _key, ...target }: typeof TARGET) => target;
const get = (user: TestUser, eventId: string) => send(app, 'GET', `/events/${eventId}`, { token: user.accessToken });
const patch = (user: TestUser, eventId: string, body: unknown) =>
  send(app, 'PATCH', `/events/${eventId}?suppress_email_notification=true`, { token: user.accessToken, body });
const post = (user: TestUser, body: unknown) => send(app, 'POST', '/events?suppress_email_notification=true', { token: user.accessToken, body });
const roomTargets = async (roomId: string) =>
  (await send(app, 'GET', `/rooms/${roomId}/streaming_targets`, { token: owner.accessToken })).json as (typeof TARGET & { id: string })[];
const eventCount = async () =>
  Number(
    (
      await dbOf(app)
        .selectFrom('events')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('show_meeting_details', () => {
  it('is false unless sent, stored on create and update, and returned by create, get, patch and the list', async () => {
    const plain = await createEvent(app, owner, timedBody());
    expect(plain.show_meeting_details).toBe(false);
    const shown = await createEvent(app, owner, timeIndependentBody({ show_meeting_details: true }));
    expect(shown.show_meeting_details).toBe(true);
    expect((await get(owner, shown.id)).json.show_meeting_details).toBe(true);

    const patched = await patch(owner, plain.id, { show_meeting_details: true });
    expect(patched.status).toBe(200);
    expect(patched.json.show_meeting_details).toBe(true);
    expect((await patch(owner, shown.id, { show_meeting_details: false })).json.show_meeting_details).toBe(false);

    const listed = (await send(app, 'GET', '/events', { token: owner.accessToken })).json as Event[];
    expect(Object.fromEntries(listed.map((e) => [e.id, e.show_meeting_details]))).toEqual({ [plain.id]: true, [shown.id]: false });
  });

  it('is returned to an invitee too, and only the owner may change it', async () => {
    const event = await createEvent(app, owner, timeIndependentBody({ show_meeting_details: true }));
    await invite(app, event.id, owner, invitee);
    expect((await get(invitee, event.id)).json.show_meeting_details).toBe(true);
    expect((await patch(invitee, event.id, { show_meeting_details: false })).status).toBe(404);
    expect((await patch(stranger, event.id, { show_meeting_details: false })).status).toBe(404);
    expect((await get(owner, event.id)).json.show_meeting_details).toBe(true);
  });

  it('is a boolean: anything else is 400 and stores nothing', async () => {
    const res = await post(owner, timeIndependentBody({ show_meeting_details: 'yes' }));
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([expect.objectContaining({ field: 'show_meeting_details' })]);
    expect(await eventCount()).toBe(0);
  });
});

describe('get_room_event and show_meeting_details', () => {
  let event: Event;
  let guestCode: string;
  beforeEach(async () => {
    event = await createEvent(
      app,
      owner,
      timeIndependentBody({ show_meeting_details: true, streaming_targets: [TARGET, SECOND] }),
      '?suppress_email_notification=true',
    );
    await invite(app, event.id, owner, invitee);
    guestCode = await insertInvite(app, event.room.id, owner);
  });

  const roomEvent = (authorization: string) =>
    app.request('GET', `/v1/rooms/${event.room.id}/event`, { headers: { authorization, 'x-forwarded-for': freshSourceAddress() } });
  const readers = () => [`Bearer ${owner.accessToken}`, `Bearer ${invitee.accessToken}`, `InviteCode ${guestCode}`, `Bearer ${guestCode}`];

  it('shows owner, invitee and guest the invite code, the call-in and the stream links while it is on', async () => {
    const sip = await dbOf(app).selectFrom('sip_configs').selectAll().where('room_id', '=', event.room.id).executeTakeFirstOrThrow();
    for (const authorization of readers()) {
      const res = await roomEvent(authorization);
      expect(res.status, authorization).toBe(200);
      expect(JSON.parse(res.text_)).toEqual({
        id: event.id,
        room_id: event.room.id,
        title: event.title,
        is_adhoc: false,
        meeting_details: {
          invite_code_id: guestCode,
          call_in: { tel: TEL, id: sip.sip_id, password: sip.password },
          streaming_links: [
            { name: TARGET.name, url: TARGET.public_url },
            { name: SECOND.name, url: SECOND.public_url },
          ],
        },
      });
    }
  });

  it('shows nobody the meeting details once it is off, and a stranger nothing at all', async () => {
    expect((await patch(owner, event.id, { show_meeting_details: false })).status).toBe(200);
    for (const authorization of readers()) {
      const body = JSON.parse((await roomEvent(authorization)).text_);
      expect(body, authorization).toEqual({ id: event.id, room_id: event.room.id, title: event.title, is_adhoc: false });
      expect(JSON.stringify(body)).not.toContain(guestCode);
    }
    const refused = await roomEvent(`Bearer ${stranger.accessToken}`);
    expect(refused.status).toBe(404);
    expect(refused.text_).not.toContain(guestCode);
  });

  it('names only an active, unexpired invite code, the oldest; none when there is none', async () => {
    await dbOf(app).updateTable('room_invites').set({ active: false }).where('code', '=', guestCode).execute();
    await insertInvite(app, event.room.id, owner, { expiration: new Date(Date.now() - 60_000) });
    const details = async () => JSON.parse((await roomEvent(`Bearer ${owner.accessToken}`)).text_).meeting_details;
    expect((await details()).invite_code_id).toBeUndefined();

    const older = await insertInvite(app, event.room.id, owner, { expiration: new Date(Date.now() + 3_600_000) });
    await insertInvite(app, event.room.id, owner);
    // two inserts can share a timestamp (the embedded database's clock): make the first the older one
    await dbOf(app)
      .updateTable('room_invites')
      .set({ created_at: new Date(Date.now() - 60_000) })
      .where('code', '=', older)
      .execute();
    expect((await details()).invite_code_id).toBe(older);
  });

  it('has no call_in without a configured telephone number', async () => {
    const other = await app.withConfig({ call_in: {} });
    try {
      const res = await other.request('GET', `/v1/rooms/${event.room.id}/event`, { headers: { authorization: `Bearer ${owner.accessToken}` } });
      const details = JSON.parse(res.text_).meeting_details;
      expect(details.call_in).toBeUndefined();
      expect(details.streaming_links).toHaveLength(2);
    } finally {
      await other.close();
    }
  });
});

describe('streaming_targets', () => {
  it("creates the targets on the event's room and lists them on the event, the key for the owner only", async () => {
    const event = await createEvent(app, owner, timedBody({ streaming_targets: [TARGET, SECOND] }));
    expect(event.streaming_targets).toEqual([
      { id: expect.any(String), ...TARGET },
      { id: expect.any(String), ...SECOND },
    ]);
    expect(await roomTargets(event.room.id)).toEqual(event.streaming_targets);

    await invite(app, event.id, owner, invitee);
    const seen = (await get(invitee, event.id)).json as Event;
    expect(seen.streaming_targets).toEqual(event.streaming_targets.map((t) => ({ id: t.id, ...withoutKey(t as typeof TARGET) })));
    const listed = (await send(app, 'GET', '/events', { token: invitee.accessToken })).json as Event[];
    expect(JSON.stringify(listed)).not.toContain(TARGET.streaming_key);
    expect(listed[0]!.streaming_targets).toHaveLength(2);
  });

  it('is an empty list for an event without targets, also after targets are added through the room', async () => {
    const event = await createEvent(app, owner, timeIndependentBody());
    expect(event.streaming_targets).toEqual([]);
    const created = await send(app, 'POST', `/rooms/${event.room.id}/streaming_targets`, { token: owner.accessToken, body: TARGET });
    expect(created.status).toBe(201);
    expect((await get(owner, event.id)).json.streaming_targets).toEqual([created.json]);
  });

  it("an update replaces the room's targets as a whole; [] removes them; leaving it out keeps them", async () => {
    const event = await createEvent(app, owner, timeIndependentBody({ streaming_targets: [TARGET] }));
    const replaced = await patch(owner, event.id, { streaming_targets: [SECOND, { ...TARGET, id: event.streaming_targets[0]!.id }] });
    expect(replaced.status).toBe(200);
    expect(replaced.json.streaming_targets.map((t: typeof TARGET) => t.name)).toEqual([SECOND.name, TARGET.name]);
    expect(await roomTargets(event.room.id)).toEqual(replaced.json.streaming_targets);

    expect((await patch(owner, event.id, { title: 'Renamed' })).json.streaming_targets).toEqual(replaced.json.streaming_targets);
    const emptied = await patch(owner, event.id, { streaming_targets: [] });
    expect(emptied.json.streaming_targets).toEqual([]);
    expect(await roomTargets(event.room.id)).toEqual([]);
  });

  it('checks each target as the room operation does, at most 20, and writes nothing when one is wrong', async () => {
    const cases: [unknown, string][] = [
      [[TARGET, { ...SECOND, public_url: 'mailto:someone@example.org' }], 'streaming_targets.1.public_url'],
      [[{ ...TARGET, streaming_endpoint: 'http:x' }], 'streaming_targets.0.streaming_endpoint'],
      [[{ ...TARGET, name: '' }], 'streaming_targets.0.name'],
      [[{ ...TARGET, kind: 'provider' }], 'streaming_targets.0.kind'],
      [[{ ...TARGET, streaming_key: 'k'.repeat(1025) }], 'streaming_targets.0.streaming_key'],
      [Array.from({ length: 21 }, () => TARGET), 'streaming_targets'],
    ];
    for (const [targets, field] of cases) {
      const res = await post(owner, timeIndependentBody({ streaming_targets: targets }));
      expect(res.status, field).toBe(400);
      expect(res.json.code).toBe('validation_failed');
      expect(res.json.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expect(await eventCount()).toBe(0);
    expect(await dbOf(app).selectFrom('rooms').select('id').execute()).toEqual([]);

    const twenty = await createEvent(app, owner, timeIndependentBody({ streaming_targets: Array.from({ length: 20 }, () => TARGET) }));
    expect(twenty.streaming_targets).toHaveLength(20);
    const refused = await patch(owner, twenty.id, { streaming_targets: [{ ...TARGET, public_url: 'no uri' }] });
    expect(refused.status).toBe(400);
    expect(await roomTargets(twenty.room.id)).toHaveLength(20);
  });

  it('an invitee or a stranger cannot replace them', async () => {
    const event = await createEvent(app, owner, timeIndependentBody({ streaming_targets: [TARGET] }));
    await invite(app, event.id, owner, invitee);
    for (const user of [invitee, stranger]) expect((await patch(user, event.id, { streaming_targets: [] })).status).toBe(404);
    expect(await roomTargets(event.room.id)).toHaveLength(1);
  });
});

describe('has_shared_folder', () => {
  it('true is refused with 400 shared_folder_not_configured on create and update, and nothing changes', async () => {
    const created = await post(owner, timeIndependentBody({ has_shared_folder: true, streaming_targets: [TARGET] }));
    expect(created.status).toBe(400);
    expect(created.json.code).toBe('shared_folder_not_configured');
    expect(await eventCount()).toBe(0);

    const event = await createEvent(app, owner, timeIndependentBody());
    const patched = await patch(owner, event.id, { has_shared_folder: true, title: 'Changed' });
    expect(patched.status).toBe(400);
    expect(patched.json.code).toBe('shared_folder_not_configured');
    expect((await get(owner, event.id)).json.title).toBe(event.title);
  });

  it('false is accepted as the web app always sends it, and the event has no shared_folder', async () => {
    const event = await createEvent(app, owner, timedBody({ has_shared_folder: false, show_meeting_details: false, streaming_targets: [] }));
    expect(event).not.toHaveProperty('shared_folder');
    const patched = await patch(owner, event.id, { has_shared_folder: false });
    expect(patched.status).toBe(200);
    expect(patched.json).not.toHaveProperty('shared_folder');
  });

  it('is refused to an invitee or stranger with 404 before anything about shared folders', async () => {
    const event = await createEvent(app, owner, timeIndependentBody());
    await invite(app, event.id, owner, invitee);
    for (const user of [invitee, stranger]) expect((await patch(user, event.id, { has_shared_folder: true })).status).toBe(404);
  });
});
