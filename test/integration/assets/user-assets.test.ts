/**
 * `GET /users/me/assets` (get_me_assets, the web app's storage settings): the files of every room
 * the caller created, newest first, page by page, each with its room and, for an event's room, its
 * event. Invitees of the owner's event, strangers and guests see none of the owner's files; every
 * answer is checked against the contract by `app.request`.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { binary, uploaded, type Asset } from '../../support/assets.js';
import { insertInvite } from '../../support/invites.js';
import { cast, dbOf, headersOf, type Cast } from '../../support/room-content.js';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const app = useTestApp();
let c: Cast;
let eventId: string;
beforeEach(async () => {
  c = await cast(app);
  // `roomId` is used by an event (cast), `otherRoomId` by none
  eventId = (await dbOf(app).selectFrom('events').select('id').where('room_id', '=', c.roomId).executeTakeFirstOrThrow()).id;
});

const BYTES = binary(100);
const mine = (user: TestUser | undefined, query = '', authorization?: string) =>
  app.request('GET', `/v1/users/me/assets${query}`, { headers: authorization ? { authorization } : headersOf(user) });
const ownedOf = async (user: TestUser, query = '') => {
  const res = await mine(user, query);
  expect(res.status, res.text_).toBe(200);
  return (JSON.parse(res.text_) as { owned_assets: (Asset & { room_id: string; event_id?: string })[] }).owned_assets;
};

describe('get_me_assets', () => {
  it("lists the files of all the owner's rooms, newest first, with each room and the event of an event's room", async () => {
    const inEventRoom = await uploaded(app, c.owner, c.roomId, BYTES, 'agenda.pdf');
    const inPlainRoom = await uploaded(app, c.owner, c.otherRoomId, BYTES, 'notes.txt');
    expect(await ownedOf(c.owner)).toEqual([
      { ...inPlainRoom, room_id: c.otherRoomId },
      { ...inEventRoom, room_id: c.roomId, event_id: eventId },
    ]);
  });

  it("shows an invitee (who may list the room's files) and a stranger none of the owner's files, only their own", async () => {
    await uploaded(app, c.owner, c.roomId, BYTES);
    expect(await ownedOf(c.invitee)).toEqual([]);
    expect(await ownedOf(c.stranger)).toEqual([]);

    const strangersRoom = (await dbOf(app).insertInto('rooms').values({ created_by: c.stranger.id }).returning('id').executeTakeFirstOrThrow()).id;
    const theirs = await uploaded(app, c.stranger, strangersRoom, BYTES, 'theirs.txt');
    expect(await ownedOf(c.stranger)).toEqual([{ ...theirs, room_id: strangersRoom }]);
    expect((await ownedOf(c.owner)).map((a) => a.id)).not.toContain(theirs.id);
  });

  it('answers 401 to a guest with an invite code and to an anonymous caller', async () => {
    await uploaded(app, c.owner, c.roomId, BYTES);
    const code = await insertInvite(app, c.roomId, c.owner);
    for (const authorization of [`InviteCode ${code}`, `Bearer ${code}`]) {
      const res = await mine(undefined, '', authorization);
      expect(res.status).toBe(401);
      expect(JSON.parse(res.text_).code).toBe('unauthorized');
    }
    expect((await mine(undefined)).status).toBe(401);
  });

  it('forgets a file deleted through its room, and every file of a deleted room', async () => {
    const gone = await uploaded(app, c.owner, c.roomId, BYTES, 'gone.txt');
    const kept = await uploaded(app, c.owner, c.otherRoomId, BYTES, 'kept.txt');
    const deleted = await app.request('DELETE', `/v1/rooms/${c.roomId}/assets/${gone.id}`, { headers: headersOf(c.owner) });
    expect(deleted.status).toBe(204);
    expect((await ownedOf(c.owner)).map((a) => a.id)).toEqual([kept.id]);
    expect((await app.request('DELETE', `/v1/rooms/${c.otherRoomId}`, { headers: headersOf(c.owner) })).status).toBe(204);
    expect(await ownedOf(c.owner)).toEqual([]);
  });

  it('pages with a Link header across rooms, and refuses per_page and page outside their bounds', async () => {
    const ids: string[] = [];
    for (const [i, room] of [c.roomId, c.otherRoomId, c.roomId].entries()) ids.push((await uploaded(app, c.owner, room, BYTES, `f${i}`)).id);
    const newestFirst = ids.reverse();

    const page1 = await mine(c.owner, '?per_page=2');
    expect(JSON.parse(page1.text_).owned_assets.map((a: Asset) => a.id)).toEqual(newestFirst.slice(0, 2));
    expect(page1.headers.get('link')).toMatch(/page=2.*rel="next"/);
    const page2 = await mine(c.owner, '?per_page=2&page=2');
    expect(JSON.parse(page2.text_).owned_assets.map((a: Asset) => a.id)).toEqual(newestFirst.slice(2));
    expect(page2.headers.get('link')).toContain('rel="prev"');
    expect(JSON.parse((await mine(c.owner, '?per_page=2&page=3')).text_).owned_assets).toEqual([]);
    expect((await ownedOf(c.owner, '?per_page=100')).length).toBe(3);

    for (const query of ['?per_page=0', '?per_page=101', '?page=0', '?page=4294967296', '?per_page=x']) {
      const res = await mine(c.owner, query);
      expect(res.status, query).toBe(400);
      expect(JSON.parse(res.text_).code).toBe('validation_failed');
    }
  });
});
