/**
 * The e-mails of invitation changes, as queued in the outbox in the transaction of the change: an
 * invitation mails the invitee (an external address with its room invite code), a withdrawal mails
 * the uninvited; `suppress_email_notification=true`, a repeated invitation and a refused request
 * queue nothing.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { createEvent, inviteOps, useExternalInvites, type TestEvent } from '../../support/event-invites.js';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const app = useTestApp();
const external = useExternalInvites(app);
let ada: TestUser;
let bob: TestUser;
let event: TestEvent;
beforeEach(async () => {
  [ada, bob] = await Promise.all([app.login('ada'), app.login('bob')]);
  event = await createEvent(app, ada, 'Planning', { timed: true });
});

const outbox = () => app.convene.database.db.selectFrom('email_outbox').select(['kind', 'event_id', 'recipients', 'text', 'ics']).orderBy('id').execute();
const invite = (body: unknown, query?: string) => inviteOps.create_event_invite(external, event.id, { token: ada.accessToken, body, query });

describe('invited', () => {
  it('mails a registered invitee once, with a calendar request', async () => {
    expect((await invite({ invitee: bob.id })).status).toBe(201);
    const mails = await outbox();
    expect(mails).toEqual([{ kind: 'invited', event_id: event.id, recipients: [bob.email], text: expect.any(String), ics: expect.any(String) }]);
    expect(mails[0]!.ics).toContain('METHOD:REQUEST');
    expect((await invite({ invitee: bob.id })).status).toBe(204);
    expect(await outbox()).toHaveLength(1); // nothing new, nothing mailed
  });

  it('mails an external address its room invite code', async () => {
    expect((await invite({ email: 'zoe@elsewhere.test' })).status).toBe(201);
    const { room_invite_code: code } = await app.convene.database.db.selectFrom('event_email_invites').select('room_invite_code').executeTakeFirstOrThrow();
    const [mail, ...more] = await outbox();
    expect(more).toEqual([]);
    expect(mail).toMatchObject({ kind: 'invited', recipients: ['zoe@elsewhere.test'] });
    expect(mail!.text).toContain(code!);
  });

  it('queues nothing with suppress_email_notification=true, or when the invitation is refused', async () => {
    expect((await invite({ invitee: bob.id }, 'suppress_email_notification=true')).status).toBe(201);
    const refused = await inviteOps.create_event_invite(app, event.id, { token: ada.accessToken, body: { email: 'zoe@elsewhere.test' } });
    expect(refused.status).toBe(409);
    expect(await outbox()).toEqual([]);
  });
});

describe('uninvited', () => {
  it('mails the user whose invitation is withdrawn a cancellation', async () => {
    await invite({ invitee: bob.id }, 'suppress_email_notification=true');
    expect((await inviteOps.delete_event_invite(app, event.id, bob.id, { token: ada.accessToken })).status).toBe(204);
    const mails = await outbox();
    expect(mails).toEqual([expect.objectContaining({ kind: 'uninvited', recipients: [bob.email] })]);
    expect(mails[0]!.ics).toContain('METHOD:CANCEL');
  });

  it('mails everyone withdrawn by address, unless suppressed', async () => {
    await invite({ email: 'zoe@elsewhere.test' }, 'suppress_email_notification=true');
    await invite({ invitee: bob.id }, 'suppress_email_notification=true');
    const quiet = await inviteOps.delete_email_event_invite(app, event.id, {
      token: ada.accessToken,
      body: { email: bob.email },
      query: 'suppress_email_notification=true',
    });
    expect(quiet.status).toBe(204);
    expect(await outbox()).toEqual([]);
    expect((await inviteOps.delete_email_event_invite(app, event.id, { token: ada.accessToken, body: { email: 'Zoe@elsewhere.test' } })).status).toBe(204);
    expect(await outbox()).toEqual([expect.objectContaining({ kind: 'uninvited', recipients: ['zoe@elsewhere.test'] })]);
  });
});
