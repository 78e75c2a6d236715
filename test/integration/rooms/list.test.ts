/** get_rooms: which rooms, in which order, and page pagination with its limits and Link header. */
import { beforeEach, describe, expect, it } from 'vitest';
import { useTestApp, type TestUser } from '../../support/test-app.js';
import { createEventFor, createRoom, dbOf, inviteToEvent, json, type Room } from '../../support/rooms.js';

const app = useTestApp();
let ada: TestUser;
let bob: TestUser;
beforeEach(async () => {
  [ada, bob] = await Promise.all([app.login('ada'), app.login('bob')]);
});

const list = async (token: string, query = '') => {
  const res = await app.request('GET', `/v1/rooms${query}`, json(token));
  return { status: res.status, link: res.headers.get('link'), body: res.status === 200 ? (JSON.parse(res.text_) as Room[]) : JSON.parse(res.text_) };
};

/** `count` rooms of `owner`, one a minute apart starting at 2026-01-01; answered oldest first. */
async function insertRooms(owner: TestUser, count: number): Promise<string[]> {
  const start = Date.parse('2026-01-01T00:00:00Z');
  const rows = await dbOf(app)
    .insertInto('rooms')
    .values(Array.from({ length: count }, (_, i) => ({ created_by: owner.id, created_at: new Date(start + i * 60_000) })))
    .returning(['id', 'created_at'])
    .execute();
  return rows.sort((a, b) => a.created_at.getTime() - b.created_at.getTime()).map((r) => r.id);
}

/** `rel` → the page and per_page its URL names. */
function parseLink(link: string | null): Record<string, { page: string | null; per_page: string | null }> {
  const out: Record<string, { page: string | null; per_page: string | null }> = {};
  for (const part of (link ?? '').split(',').filter(Boolean)) {
    const match = /^<([^>]+)>; rel="(\w+)"$/.exec(part);
    if (!match) throw new Error(`malformed Link entry: ${part}`);
    const url = new URL(match[1]!);
    expect(url.pathname).toBe('/v1/rooms');
    out[match[2]!] = { page: url.searchParams.get('page'), per_page: url.searchParams.get('per_page') };
  }
  return out;
}

describe('get_rooms', () => {
  it('lists owned rooms and rooms of events the caller is invited to, not other rooms', async () => {
    const own = await createRoom(app, ada);
    const invited = await createRoom(app, bob);
    await inviteToEvent(app, await createEventFor(app, invited.id, bob), ada, bob);
    const notInvited = await createRoom(app, bob);
    await createEventFor(app, notInvited.id, bob);
    await createRoom(app, bob);

    const { status, body, link } = await list(ada.accessToken);
    expect(status).toBe(200);
    expect((body as Room[]).map((r) => r.id).sort()).toEqual([own.id, invited.id].sort());
    expect(link).toBeNull();
  });

  it('lists a room once when the owner is also invited to its event', async () => {
    const own = await createRoom(app, ada);
    const eventId = await createEventFor(app, own.id, ada);
    await inviteToEvent(app, eventId, ada, ada);
    await inviteToEvent(app, eventId, bob, ada);
    expect((await list(ada.accessToken)).body).toEqual([own]);
  });

  it('lists the newest first; equal creation times are ordered by id', async () => {
    const ids = await insertRooms(ada, 3);
    const same = new Date('2025-06-01T12:00:00Z');
    const tied = await dbOf(app)
      .insertInto('rooms')
      .values([
        { created_by: ada.id, created_at: same },
        { created_by: ada.id, created_at: same },
      ])
      .returning('id')
      .execute();
    const expected = [
      ...ids.reverse(),
      ...tied
        .map((t) => t.id)
        .sort()
        .reverse(),
    ];
    expect((await list(ada.accessToken)).body.map((r: Room) => r.id)).toEqual(expected);
  });

  it('pages through every room exactly once with first/prev/next/last links', async () => {
    const newestFirst = (await insertRooms(ada, 5)).reverse();
    const first = await list(ada.accessToken, '?per_page=2');
    expect(first.body.map((r: Room) => r.id)).toEqual(newestFirst.slice(0, 2));
    expect(parseLink(first.link)).toEqual({ next: { page: '2', per_page: '2' }, last: { page: '3', per_page: '2' } });

    const middle = await list(ada.accessToken, '?per_page=2&page=2');
    expect(middle.body.map((r: Room) => r.id)).toEqual(newestFirst.slice(2, 4));
    expect(parseLink(middle.link)).toEqual({
      first: { page: '1', per_page: '2' },
      prev: { page: '1', per_page: '2' },
      next: { page: '3', per_page: '2' },
      last: { page: '3', per_page: '2' },
    });

    const last = await list(ada.accessToken, '?per_page=2&page=3');
    expect(last.body.map((r: Room) => r.id)).toEqual(newestFirst.slice(4));
    expect(parseLink(last.link)).toEqual({ first: { page: '1', per_page: '2' }, prev: { page: '2', per_page: '2' } });

    const beyond = await list(ada.accessToken, '?per_page=2&page=4');
    expect(beyond).toMatchObject({ status: 200, body: [] });
  });

  it('defaults to 30 per page', async () => {
    await insertRooms(ada, 31);
    const { body, link } = await list(ada.accessToken);
    expect(body).toHaveLength(30);
    expect(parseLink(link).next).toEqual({ page: '2', per_page: '30' });
  });

  it('accepts per_page 1 and 100', async () => {
    await insertRooms(ada, 101);
    expect((await list(ada.accessToken, '?per_page=1')).body).toHaveLength(1);
    const hundred = await list(ada.accessToken, '?per_page=100');
    expect(hundred.body).toHaveLength(100);
    expect(parseLink(hundred.link).last).toEqual({ page: '2', per_page: '100' });
    expect((await list(ada.accessToken, '?per_page=100&page=2')).body).toHaveLength(1);
  });

  it.each([
    ['per_page=0', 'per_page', 'out_of_range'],
    ['per_page=101', 'per_page', 'out_of_range'],
    ['page=0', 'page', 'out_of_range'],
    ['page=-1', 'page', 'out_of_range'],
    ['page=two', 'page', 'invalid_type'],
    ['per_page=1.5', 'per_page', 'invalid_type'],
  ])('refuses %s with 400', async (query, field, code) => {
    const { status, body } = await list(ada.accessToken, `?${query}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 'validation_failed', errors: [{ field, code }] });
  });
});
