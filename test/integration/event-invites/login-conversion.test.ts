/**
 * An e-mail invitation becomes a user invitation when someone logs in with that address (first
 * login), keeping its role, so the new user can see the meeting and answer at once.
 */
import { beforeEach, expect, it } from 'vitest';
import { createEvent, inviteesOfEvent, inviteOps, storedInvite, useExternalInvites, type TestEvent } from '../../support/event-invites.js';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const app = useTestApp();
const external = useExternalInvites(app);
let ada: TestUser;
let event: TestEvent;
beforeEach(async () => {
  ada = await app.login('ada');
  event = await createEvent(app, ada);
});

const invite = async (email: string, role?: string) =>
  expect((await inviteOps.create_event_invite(external, event.id, { token: ada.accessToken, body: { email, role } })).status).toBe(201);

it('turns the e-mail invitation into a pending user invitation with its role at first login', async () => {
  await invite('zoe@elsewhere.test', 'moderator');
  await invite('yan@elsewhere.test');
  const before = await inviteesOfEvent(app, event.id, ada.accessToken);
  expect(before.map((i) => [i.profile.kind, i.profile.email, i.profile.role])).toEqual([
    ['email', 'zoe@elsewhere.test', 'moderator'],
    ['email', 'yan@elsewhere.test', 'user'],
  ]);

  const zoe = await app.login('zoe', { email: 'Zoe@Elsewhere.test' });
  expect(await storedInvite(app, event.id, zoe.id)).toEqual({ role: 'moderator', status: 'pending' });
  const after = await inviteesOfEvent(app, event.id, ada.accessToken);
  expect(after.map((i) => [i.profile.kind, i.profile.email.toLowerCase(), i.profile.role, i.status])).toEqual([
    ['registered', 'zoe@elsewhere.test', 'moderator', 'pending'],
    ['email', 'yan@elsewhere.test', 'user', 'pending'],
  ]);

  // now an invitee: they read the invitees and answer
  expect((await inviteOps.get_event_invites(app, event.id, { token: zoe.accessToken })).status).toBe(200);
  expect((await inviteOps.accept_event_invite(app, event.id, { token: zoe.accessToken })).status).toBe(204);
  expect(await storedInvite(app, event.id, zoe.id)).toEqual({ role: 'moderator', status: 'accepted' });
});

it('leaves invitations of other addresses alone', async () => {
  await invite('zoe@elsewhere.test');
  const yan = await app.login('yan', { email: 'yan@elsewhere.test' });
  expect(await storedInvite(app, event.id, yan.id)).toBeUndefined();
  expect((await inviteOps.get_event_invites(app, event.id, { token: yan.accessToken })).status).toBe(404);
  expect((await inviteesOfEvent(app, event.id, ada.accessToken)).map((i) => i.profile.kind)).toEqual(['email']);
});
