/**
 * get_event_invites and update_event_invite: registered invitees first, then e-mail invitees, page
 * by page with a `Link` header; roles and answers as they change.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { libravatarUrl } from '../../../src/domain/users/avatar.js';
import { createEvent, inviteesOfEvent, inviteOps, storedInvite, useExternalInvites, type TestEvent } from '../../support/event-invites.js';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const app = useTestApp();
const external = useExternalInvites(app);
let ada: TestUser;
let users: TestUser[];
let event: TestEvent;
beforeEach(async () => {
  ada = await app.login('ada');
  users = [];
  for (const name of ['bob', 'carol', 'dave']) users.push(await app.login(name));
  event = await createEvent(app, ada);
});

const invite = (body: unknown) => inviteOps.create_event_invite(external, event.id, { token: ada.accessToken, body });
const page = (query: string, token = ada.accessToken) => inviteOps.get_event_invites(app, event.id, { token, query });

/** The page number each rel of a `Link` header points at (every link keeps per_page=2 here). */
function linkPages(header: string | null): Record<string, number> {
  const pages: Record<string, number> = {};
  for (const entry of header?.split(',') ?? []) {
    const [, url, rel] = /^<([^>]+)>; rel="(\w+)"$/.exec(entry)!;
    const params = new URL(url!).searchParams;
    expect(params.get('per_page')).toBe('2');
    pages[rel!] = Number(params.get('page'));
  }
  return pages;
}

/** Two e-mail invitees first, then three registered ones: the list still puts the registered first. */
async function inviteFive() {
  for (const address of ['zoe@elsewhere.test', 'yan@elsewhere.test']) expect((await invite({ email: address })).status).toBe(201);
  for (const user of users) expect((await invite({ invitee: user.id })).status).toBe(201);
}

describe('get_event_invites', () => {
  it('answers an empty list without a Link header for an event nobody is invited to', async () => {
    const res = await page('');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text_)).toEqual([]);
    expect(res.headers.get('link')).toBeNull();
  });

  it('lists registered invitees first (in invitation order), then e-mail invitees', async () => {
    await inviteFive();
    const list = await inviteesOfEvent(app, event.id, ada.accessToken);
    expect(list.map((i) => i.profile.email)).toEqual([...users.map((u) => u.email), 'zoe@elsewhere.test', 'yan@elsewhere.test']);
    expect(list[0]).toEqual({
      profile: {
        kind: 'registered',
        id: users[0]!.id,
        email: users[0]!.email,
        title: '',
        firstname: 'Bob',
        lastname: 'Tester',
        display_name: 'Bob Tester',
        avatar_url: expect.any(String),
        role: 'user',
      },
      status: 'pending',
    });
    expect(list[3]).toEqual({
      profile: {
        kind: 'email',
        email: 'zoe@elsewhere.test',
        avatar_url: libravatarUrl(app.config.users.avatar_base_url, 'zoe@elsewhere.test'),
        role: 'user',
      },
      status: 'pending',
    });
  });

  it('pages across both kinds, with first/prev/next/last links', async () => {
    await inviteFive();
    const emails = async (query: string) => {
      const res = await page(query);
      expect(res.status).toBe(200);
      return { emails: JSON.parse(res.text_).map((i: { profile: { email: string } }) => i.profile.email), links: linkPages(res.headers.get('link')) };
    };
    const first = await emails('per_page=2');
    expect(first.emails).toEqual([users[0]!.email, users[1]!.email]);
    expect(first.links).toEqual({ next: 2, last: 3 });

    const second = await emails('per_page=2&page=2');
    expect(second.emails).toEqual([users[2]!.email, 'zoe@elsewhere.test']);
    expect(second.links).toEqual({ first: 1, prev: 1, next: 3, last: 3 });

    const third = await emails('per_page=2&page=3');
    expect(third.emails).toEqual(['yan@elsewhere.test']);
    expect(third.links).toEqual({ first: 1, prev: 2 });

    expect((await emails('per_page=2&page=4')).emails).toEqual([]);
  });

  it('takes per_page 1 and 100, and refuses 0, 101 and page 0', async () => {
    await inviteFive();
    expect(JSON.parse((await page('per_page=1')).text_)).toHaveLength(1);
    expect(JSON.parse((await page('per_page=100')).text_)).toHaveLength(5);
    for (const query of ['per_page=0', 'per_page=101', 'page=0', 'page=x']) {
      const res = await page(query);
      expect(res.status, query).toBe(400);
      expect(JSON.parse(res.text_).code).toBe('validation_failed');
    }
  });

  it('shows answers and role changes', async () => {
    await inviteFive();
    const [bob, carol] = users as [TestUser, TestUser];
    await inviteOps.accept_event_invite(app, event.id, { token: bob.accessToken });
    await inviteOps.decline_event_invite(app, event.id, { token: carol.accessToken });
    const res = await inviteOps.update_event_invite(app, event.id, carol.id, { token: ada.accessToken, body: { role: 'moderator' } });
    expect(res.status, res.text_).toBe(204);
    const list = await inviteesOfEvent(app, event.id, bob.accessToken);
    expect(list.slice(0, 3).map((i) => [i.profile.id, i.profile.role, i.status])).toEqual([
      [bob.id, 'user', 'accepted'],
      [carol.id, 'moderator', 'declined'],
      [users[2]!.id, 'user', 'pending'],
    ]);
  });
});

describe('update_event_invite', () => {
  it('changes the role back and forth', async () => {
    const bob = users[0]!;
    await invite({ invitee: bob.id });
    const change = (role: string) => inviteOps.update_event_invite(app, event.id, bob.id, { token: ada.accessToken, body: { role } });
    expect((await change('moderator')).status).toBe(204);
    expect(await storedInvite(app, event.id, bob.id)).toEqual({ role: 'moderator', status: 'pending' });
    expect((await change('user')).status).toBe(204);
    expect(await storedInvite(app, event.id, bob.id)).toEqual({ role: 'user', status: 'pending' });
  });

  it('answers 404 for a user who is not invited, and for the creator', async () => {
    for (const userId of [users[0]!.id, ada.id, '00000000-0000-4000-8000-000000000002']) {
      const res = await inviteOps.update_event_invite(app, event.id, userId, { token: ada.accessToken, body: { role: 'moderator' } });
      expect(res.status).toBe(404);
    }
  });

  it.each([
    ['an unknown role', { role: 'owner' }],
    ['no role', {}],
    ['a role that is no string', { role: 1 }],
  ])('refuses %s with 400', async (_case, body) => {
    const bob = users[0]!;
    await invite({ invitee: bob.id });
    const res = await inviteOps.update_event_invite(app, event.id, bob.id, { token: ada.accessToken, body });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text_).code).toBe('validation_failed');
    expect(await storedInvite(app, event.id, bob.id)).toEqual({ role: 'user', status: 'pending' });
  });

  it('refuses a user id that is no uuid and malformed JSON', async () => {
    const bad = await inviteOps.update_event_invite(app, event.id, 'bob', { token: ada.accessToken, body: { role: 'user' } });
    expect(bad.status).toBe(400);
    const malformed = await inviteOps.update_event_invite(app, event.id, users[0]!.id, { token: ada.accessToken, rawBody: '{role' });
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.text_).code).toBe('invalid_json');
  });
});
