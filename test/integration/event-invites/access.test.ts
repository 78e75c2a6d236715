/**
 * The access matrix of the seven invite operations: the creator, an invitee in each answer state, a
 * stranger (another logged-in user) and an anonymous caller. No access is 404 (never 403), no token
 * is 401, and a refused request changes nothing.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { EventInviteStatus } from '../../../src/db/schema.js';
import { createEvent, inviteDirectly, inviteOps, type TestEvent } from '../../support/event-invites.js';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const app = useTestApp();
let ada: TestUser; // creates the event
let bob: TestUser; // the invitee whose access is tested
let carol: TestUser; // registered, not invited: the one to invite
let dave: TestUser; // invited: the one whose invite is changed or withdrawn
let eve: TestUser; // a stranger
let event: TestEvent;

type CallerKind = 'creator' | `invitee ${EventInviteStatus}` | 'stranger' | 'anonymous';
const STATUSES: EventInviteStatus[] = ['pending', 'accepted', 'tentative', 'declined'];
const CALLERS: CallerKind[] = ['creator', ...STATUSES.map((s) => `invitee ${s}` as const), 'stranger', 'anonymous'];

let bobStatus: EventInviteStatus = 'pending';
async function setUp() {
  [ada, bob, carol, dave, eve] = await Promise.all([app.login('ada'), app.login('bob'), app.login('carol'), app.login('dave'), app.login('eve')]);
  event = await createEvent(app, ada);
  await inviteDirectly(app, event, ada, bob, { status: bobStatus });
  await inviteDirectly(app, event, ada, dave);
}

function tokenOf(kind: CallerKind): string | undefined {
  if (kind === 'creator') return ada.accessToken;
  if (kind === 'stranger') return eve.accessToken;
  if (kind === 'anonymous') return undefined;
  return bob.accessToken;
}

const snapshot = () => app.convene.database.db.selectFrom('event_invites').select(['invitee', 'role', 'status']).orderBy('invitee').execute();

const OPERATIONS = {
  create_event_invite: (token?: string) => inviteOps.create_event_invite(app, event.id, { token, body: { invitee: carol.id } }),
  get_event_invites: (token?: string) => inviteOps.get_event_invites(app, event.id, { token }),
  update_event_invite: (token?: string) => inviteOps.update_event_invite(app, event.id, dave.id, { token, body: { role: 'moderator' } }),
  delete_event_invite: (token?: string) => inviteOps.delete_event_invite(app, event.id, dave.id, { token }),
  delete_email_event_invite: (token?: string) => inviteOps.delete_email_event_invite(app, event.id, { token, body: { email: dave.email } }),
  accept_event_invite: (token?: string) => inviteOps.accept_event_invite(app, event.id, { token }),
  decline_event_invite: (token?: string) => inviteOps.decline_event_invite(app, event.id, { token }),
};

// What each caller gets: only the creator changes invitations; invitees read them and answer their own.
const invitee = (ok: number) => Object.fromEntries(STATUSES.map((s) => [`invitee ${s}`, ok]));
const EXPECTED: Record<keyof typeof OPERATIONS, Record<CallerKind, number>> = {
  create_event_invite: { creator: 201, ...invitee(404), stranger: 404, anonymous: 401 } as Record<CallerKind, number>,
  get_event_invites: { creator: 200, ...invitee(200), stranger: 404, anonymous: 401 } as Record<CallerKind, number>,
  update_event_invite: { creator: 204, ...invitee(404), stranger: 404, anonymous: 401 } as Record<CallerKind, number>,
  delete_event_invite: { creator: 204, ...invitee(404), stranger: 404, anonymous: 401 } as Record<CallerKind, number>,
  delete_email_event_invite: { creator: 204, ...invitee(404), stranger: 404, anonymous: 401 } as Record<CallerKind, number>,
  // the creator has no invitation of their own to answer
  accept_event_invite: { creator: 404, ...invitee(204), stranger: 404, anonymous: 401 } as Record<CallerKind, number>,
  decline_event_invite: { creator: 404, ...invitee(204), stranger: 404, anonymous: 401 } as Record<CallerKind, number>,
};

describe.each(Object.keys(OPERATIONS) as (keyof typeof OPERATIONS)[])('%s', (operation) => {
  describe.each(CALLERS)('called by the %s', (kind) => {
    beforeEach(async () => {
      bobStatus = kind.startsWith('invitee ') ? (kind.slice('invitee '.length) as EventInviteStatus) : 'pending';
      await setUp();
    });

    it(`answers ${EXPECTED[operation][kind]}`, async () => {
      const before = await snapshot();
      const res = await OPERATIONS[operation](tokenOf(kind));
      const expected = EXPECTED[operation][kind];
      expect(res.status, res.text_).toBe(expected);
      if (expected >= 400) {
        expect(JSON.parse(res.text_).code).toBe(expected === 401 ? 'unauthorized' : 'not_found');
        if (expected === 401) expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(await snapshot()).toEqual(before); // refused: nothing changed
      }
    });
  });

  it('answers 404 for an event that does not exist, and 400 for an id that is no uuid', async () => {
    bobStatus = 'pending';
    await setUp();
    const missing = '00000000-0000-4000-8000-000000000000';
    const nonUuid = 'not-a-uuid';
    const saved = event;
    try {
      event = { ...saved, id: missing };
      const notFound = await OPERATIONS[operation](ada.accessToken);
      expect(notFound.status, notFound.text_).toBe(404);
      event = { ...saved, id: nonUuid };
      const invalid = await OPERATIONS[operation](ada.accessToken);
      expect(invalid.status, invalid.text_).toBe(400);
      expect(JSON.parse(invalid.text_)).toMatchObject({ code: 'validation_failed', errors: [{ field: expect.stringContaining('event_id') }] });
    } finally {
      event = saved;
    }
  });
});

describe('the answer of a successful call', () => {
  beforeEach(async () => {
    bobStatus = 'pending';
    await setUp();
  });

  it("accept and decline set only the caller's own status", async () => {
    expect((await inviteOps.accept_event_invite(app, event.id, { token: bob.accessToken })).status).toBe(204);
    let rows = await snapshot();
    expect(rows.find((r) => r.invitee === bob.id)?.status).toBe('accepted');
    expect(rows.find((r) => r.invitee === dave.id)?.status).toBe('pending');
    expect((await inviteOps.decline_event_invite(app, event.id, { token: bob.accessToken })).status).toBe(204);
    rows = await snapshot();
    expect(rows.find((r) => r.invitee === bob.id)?.status).toBe('declined');
  });

  it('a declined invitee still reads the invitees and can accept later', async () => {
    await inviteOps.decline_event_invite(app, event.id, { token: bob.accessToken });
    expect((await inviteOps.get_event_invites(app, event.id, { token: bob.accessToken })).status).toBe(200);
    expect((await inviteOps.accept_event_invite(app, event.id, { token: bob.accessToken })).status).toBe(204);
    expect((await snapshot()).find((r) => r.invitee === bob.id)?.status).toBe('accepted');
  });

  it('an uninvited user loses access at once', async () => {
    expect((await inviteOps.delete_event_invite(app, event.id, bob.id, { token: ada.accessToken })).status).toBe(204);
    expect((await inviteOps.get_event_invites(app, event.id, { token: bob.accessToken })).status).toBe(404);
    expect((await inviteOps.accept_event_invite(app, event.id, { token: bob.accessToken })).status).toBe(404);
  });
});
