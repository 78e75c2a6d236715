/**
 * The hot paths' database round trips: a page of `GET /events` costs a fixed number of queries
 * whatever the number of events on it (no query per event), and reading one event or its
 * occurrences reads the event once (the access rule needs nothing but the view row).
 */
import type { KyselyPlugin } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../../src/domain/events/cursor.js';
import { createEventService, type EventService } from '../../../src/domain/events/events.service.js';
import { findUserById, rowToUser } from '../../../src/domain/users/users.repository.js';
import type { User } from '../../../src/domain/users/user.js';
import { at, createEvent, invite, send, timedBody } from '../../support/events.js';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const app = useTestApp();
let alice: TestUser;
let caller: User;
let service: EventService;
let queries = 0;

const counting: KyselyPlugin = {
  transformQuery: (args) => args.node, // called for subqueries too: count results instead
  transformResult(args) {
    queries++;
    return Promise.resolve(args.result);
  },
};

/** The number of queries `fn` sends. */
async function queriesOf(fn: () => Promise<unknown>): Promise<number> {
  queries = 0;
  await fn();
  return queries;
}

beforeEach(async () => {
  alice = await app.login('alice');
  const bob = await app.login('bob');
  caller = rowToUser((await findUserById(app.convene.database.db, alice.id))!);
  service = createEventService({
    db: app.convene.database.db.withPlugin(counting),
    config: app.config,
    cursors: createCursorCodec('query-count-test'),
  });
  // weekly series with an exception and an invitee each, so that every batched lookup has work
  for (let day = 1; day <= 6; day++) {
    const start = `2026-12-0${day}T09:00:00Z`;
    const event = await createEvent(
      app,
      alice,
      timedBody({ starts_at: at(start), ends_at: at(start.replace('T09', 'T10')), recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=4'] }),
      '?suppress_email_notification=true',
    );
    await invite(app, event.id, alice, bob);
    const [, second] = (await send(app, 'GET', `/events/${event.id}/instances`, { token: alice.accessToken })).json;
    await send(app, 'PATCH', `/events/${event.id}/instances/${second.instance_id}`, { token: alice.accessToken, body: { title: 'Moved' } });
  }
});

describe('query counts', () => {
  it('GET /events: the same few queries for a page of 2 events as for a page of 6', async () => {
    const small = await queriesOf(() => service.list(caller, { per_page: 2, invitees_max: 5 }));
    const large = await queriesOf(() => service.list(caller, { per_page: 6, invitees_max: 5 }));
    expect(large).toBe(small);
    // the page with its exceptions, registered and e-mail invitees (every profile is the caller's own)
    expect(large).toBe(3);
  });

  it('get_event and get_event_instances read the event once', async () => {
    const [event] = (await service.list(caller, { per_page: 1 })).items;
    expect(await queriesOf(() => service.get(caller, event!.id, 0))).toBe(1);
    // the view, then the exceptions of the page's original slots and its moved occurrences, in one query
    expect(await queriesOf(() => service.instances(caller, event!.id, { per_page: 10 }))).toBe(2);
    // and so does every next page
    const { next } = await service.instances(caller, event!.id, { per_page: 1 });
    expect(await queriesOf(() => service.instances(caller, event!.id, { per_page: 1, cursor: next }))).toBe(2);
  });
});
