/**
 * The invitee view that event answers embed (`invitees`, `invitees_truncated`): `listInvitees` for
 * one event and `inviteesOf` for a page of events must agree on order and totals.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import type { DB } from '../../../src/db/schema.js';
import { inviteesOf, listInvitees } from '../../../src/domain/events/invitees.js';
import { libravatarUrl } from '../../../src/domain/users/avatar.js';
import { createEvent, inviteDirectly, type TestEvent } from '../../support/event-invites.js';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const app = useTestApp();
let db: Kysely<DB>;
let ada: TestUser;
let guests: TestUser[];
let busy: TestEvent; // 3 registered + 2 e-mail invitees
let quiet: TestEvent; // 1 e-mail invitee
let empty: TestEvent;
beforeEach(async () => {
  db = app.convene.database.db;
  ada = await app.login('ada');
  guests = [];
  for (const name of ['bob', 'carol', 'dave']) guests.push(await app.login(name));
  [busy, quiet, empty] = [await createEvent(app, ada, 'Busy'), await createEvent(app, ada, 'Quiet'), await createEvent(app, ada, 'Empty')];
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  // e-mail invitations older than the registered ones: the view still lists registered first
  await db
    .insertInto('event_email_invites')
    .values([
      { event_id: busy.id, email: 'zoe@elsewhere.test', role: 'moderator', created_by: ada.id, created_at: new Date(t0) },
      { event_id: busy.id, email: 'yan@elsewhere.test', role: 'guest', created_by: ada.id, created_at: new Date(t0 + 1000) },
      { event_id: quiet.id, email: 'xia@elsewhere.test', created_by: ada.id, created_at: new Date(t0) },
    ])
    .execute();
  for (const [i, guest] of guests.entries()) {
    // distinct times: invites written within one clock tick would tie, and ties go by the random user id
    const createdAt = new Date(t0 + (i + 10) * 1000);
    await inviteDirectly(app, busy, ada, guest, { status: i === 0 ? 'accepted' : 'pending', role: i === 1 ? 'moderator' : 'user', createdAt });
  }
});

const emailsOf = (items: { profile: { email: string } }[]) => items.map((i) => i.profile.email);

describe('listInvitees', () => {
  it('lists registered invitees first, then e-mail invitees, each oldest first', async () => {
    const page = await listInvitees(db, busy.id, { limit: 10, offset: 0 });
    expect(page.total).toBe(5);
    expect(emailsOf(page.items)).toEqual([...guests.map((g) => g.email), 'zoe@elsewhere.test', 'yan@elsewhere.test']);
    expect(page.items.map((i) => [i.profile.role, i.status])).toEqual([
      ['user', 'accepted'],
      ['moderator', 'pending'],
      ['user', 'pending'],
      ['moderator', 'pending'],
      ['user', 'pending'], // a guest address shows the role it gets on registering
    ]);
  });

  it('windows across the two kinds', async () => {
    const windows = [
      [0, 2],
      [2, 2],
      [3, 1],
      [4, 5],
      [5, 5],
    ] as const;
    const all = emailsOf((await listInvitees(db, busy.id, { limit: 10, offset: 0 })).items);
    for (const [offset, limit] of windows) {
      const page = await listInvitees(db, busy.id, { limit, offset });
      expect(emailsOf(page.items), `${offset}+${limit}`).toEqual(all.slice(offset, offset + limit));
      expect(page.total).toBe(5);
    }
    expect(await listInvitees(db, busy.id, { limit: 0, offset: 0 })).toEqual({ items: [], total: 5 });
  });

  it('shows e-mail invitees with an avatar of the configured base', async () => {
    const page = await listInvitees(db, quiet.id, { limit: 1, offset: 0, avatarBaseUrl: 'https://avatars.test/' });
    expect(page.items).toEqual([
      {
        profile: { kind: 'email', email: 'xia@elsewhere.test', avatar_url: libravatarUrl('https://avatars.test/', 'xia@elsewhere.test'), role: 'user' },
        status: 'pending',
      },
    ]);
  });
});

describe('inviteesOf', () => {
  it('answers the first N of every event, in the order of listInvitees, with totals', async () => {
    const ids = [busy.id, quiet.id, empty.id];
    for (const limit of [0, 1, 2, 3, 4, 5, 6, 4294967295]) {
      const result = await inviteesOf(db, ids, limit);
      expect([...result.keys()]).toEqual(ids);
      for (const id of ids) {
        const single = await listInvitees(db, id, { limit, offset: 0 });
        expect(result.get(id), `${id} at ${limit}`).toEqual(single);
      }
    }
  });

  it('answers an entry for an unknown event and nothing for no events', async () => {
    const unknown = '00000000-0000-4000-8000-000000000003';
    expect(await inviteesOf(db, [unknown], 3)).toEqual(new Map([[unknown, { items: [], total: 0 }]]));
    expect(await inviteesOf(db, [], 3)).toEqual(new Map());
  });
});
