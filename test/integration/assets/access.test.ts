/**
 * Assets: who may do what. The owner uploads and deletes; owner and event invitee list and download;
 * a stranger gets 404 (never 403), an anonymous caller 401, and an asset is only reachable through
 * its own room.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { assetsPath, binary, download, upload, uploaded, type Asset } from '../../support/assets.js';
import { cast, headersOf, NOT_A_UUID, UNKNOWN_ID, type Cast } from '../../support/room-content.js';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const app = useTestApp();
let c: Cast;
beforeEach(async () => {
  c = await cast(app);
});

const BYTES = binary(1000);
const list = (user: TestUser | undefined, roomId = c.roomId, query = '') => app.request('GET', `${assetsPath(roomId)}${query}`, { headers: headersOf(user) });
const remove = (user: TestUser | undefined, assetId: string, roomId = c.roomId) =>
  app.request('DELETE', `${assetsPath(roomId)}/${assetId}`, { headers: headersOf(user) });
const nobodyOr = (who: 'invitee' | 'stranger' | 'anonymous') => (who === 'anonymous' ? undefined : c[who]);

describe('create_room_asset', () => {
  it("stores the owner's upload (201) as an asset of kind upload in namespace uploads", async () => {
    const res = await upload(app, c.owner, c.roomId, BYTES, { filename: 'agenda.pdf' });
    expect(res.status).toBe(201);
    const asset = JSON.parse(res.text_) as Asset;
    expect(asset).toEqual({ id: expect.any(String), filename: 'agenda.pdf', namespace: 'uploads', kind: 'upload', size: 1000, created_at: expect.any(String) });
    expect(Math.abs(Date.parse(asset.created_at) - Date.now())).toBeLessThan(60_000);
  });

  it.each([
    ['invitee', 404],
    ['stranger', 404],
    ['anonymous', 401],
  ] as const)('refuses the %s (%i) and stores nothing', async (who, status) => {
    expect((await upload(app, nobodyOr(who), c.roomId, BYTES)).status).toBe(status);
    expect(JSON.parse((await list(c.owner)).text_)).toEqual([]);
  });

  it('answers 404 for an unknown room, 400 for a room id that is not a uuid', async () => {
    expect((await upload(app, c.owner, UNKNOWN_ID, BYTES)).status).toBe(404);
    expect((await upload(app, c.owner, NOT_A_UUID, BYTES)).status).toBe(400);
  });
});

describe('get_room_assets', () => {
  it("lists the room's assets, newest first, to the owner and the invitee", async () => {
    const first = await uploaded(app, c.owner, c.roomId, BYTES, 'first.txt');
    const second = await uploaded(app, c.owner, c.roomId, BYTES, 'second.txt');
    await uploaded(app, c.owner, c.otherRoomId, BYTES, 'elsewhere.txt');
    for (const user of [c.owner, c.invitee]) {
      const res = await list(user);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.text_)).toEqual([second, first]);
    }
  });

  it('answers 404 to a stranger, 401 to an anonymous caller, 400 to a non-uuid room id', async () => {
    await uploaded(app, c.owner, c.roomId, BYTES);
    const stranger = await list(c.stranger);
    expect(stranger.status).toBe(404);
    expect(JSON.parse(stranger.text_).code).toBe('not_found');
    expect((await list(undefined)).status).toBe(401);
    expect((await list(c.owner, NOT_A_UUID)).status).toBe(400);
    expect((await list(c.owner, UNKNOWN_ID)).status).toBe(404);
  });

  it('pages with a Link header and refuses per_page and page outside their bounds', async () => {
    const assets: Asset[] = [];
    for (const name of ['a', 'b', 'c']) assets.push(await uploaded(app, c.owner, c.roomId, BYTES, name));
    const newestFirst = assets.reverse().map((a) => a.id);

    const page1 = await list(c.owner, c.roomId, '?per_page=2');
    expect(JSON.parse(page1.text_).map((a: Asset) => a.id)).toEqual(newestFirst.slice(0, 2));
    expect(page1.headers.get('link')).toMatch(/page=2.*rel="next"/);
    const page2 = await list(c.owner, c.roomId, '?per_page=2&page=2');
    expect(JSON.parse(page2.text_).map((a: Asset) => a.id)).toEqual(newestFirst.slice(2));
    expect(page2.headers.get('link')).toContain('rel="prev"');
    expect(page2.headers.get('link')).not.toContain('rel="next"');

    expect((await list(c.owner, c.roomId, '?per_page=100')).status).toBe(200);
    for (const query of ['?per_page=101', '?per_page=0', '?page=0']) expect((await list(c.owner, c.roomId, query)).status).toBe(400);
  });
});

describe('get_room_asset', () => {
  it('gives the owner and the invitee the uploaded bytes', async () => {
    const asset = await uploaded(app, c.owner, c.roomId, BYTES);
    for (const user of [c.owner, c.invitee]) {
      const res = await download(app, user, c.roomId, asset.id);
      expect(res.status).toBe(200);
      expect(res.bytes.equals(BYTES)).toBe(true);
    }
  });

  it('answers 404 to a stranger and 401 to an anonymous caller', async () => {
    const asset = await uploaded(app, c.owner, c.roomId, BYTES);
    const stranger = await download(app, c.stranger, c.roomId, asset.id);
    expect(stranger.status).toBe(404);
    expect(stranger.error?.code).toBe('not_found');
    expect((await download(app, undefined, c.roomId, asset.id)).status).toBe(401);
  });

  it('does not find an asset through another room of the same owner, nor an unknown one; 400 for non-uuids', async () => {
    const asset = await uploaded(app, c.owner, c.roomId, BYTES);
    expect((await download(app, c.owner, c.otherRoomId, asset.id)).status).toBe(404);
    expect((await download(app, c.owner, c.roomId, UNKNOWN_ID)).status).toBe(404);
    expect((await download(app, c.owner, c.roomId, NOT_A_UUID)).status).toBe(400);
    expect((await download(app, c.owner, NOT_A_UUID, asset.id)).status).toBe(400);
  });
});

describe('delete_room_asset', () => {
  it("deletes the owner's asset (204): gone from the list and from downloads; a second delete is 404", async () => {
    const asset = await uploaded(app, c.owner, c.roomId, BYTES);
    const res = await remove(c.owner, asset.id);
    expect(res.status).toBe(204);
    expect(res.text_).toBe('');
    expect(JSON.parse((await list(c.owner)).text_)).toEqual([]);
    expect((await download(app, c.owner, c.roomId, asset.id)).status).toBe(404);
    expect((await remove(c.owner, asset.id)).status).toBe(404);
  });

  it.each([
    ['invitee', 404],
    ['stranger', 404],
    ['anonymous', 401],
  ] as const)('refuses the %s (%i) and keeps the asset', async (who, status) => {
    const asset = await uploaded(app, c.owner, c.roomId, BYTES);
    expect((await remove(nobodyOr(who), asset.id)).status).toBe(status);
    expect((await download(app, c.owner, c.roomId, asset.id)).bytes.equals(BYTES)).toBe(true);
  });

  it('answers 404 for an asset of another room, 400 for non-uuid ids', async () => {
    const asset = await uploaded(app, c.owner, c.roomId, BYTES);
    expect((await remove(c.owner, asset.id, c.otherRoomId)).status).toBe(404);
    expect((await download(app, c.owner, c.roomId, asset.id)).status).toBe(200);
    expect((await remove(c.owner, NOT_A_UUID)).status).toBe(400);
    expect((await remove(c.owner, asset.id, NOT_A_UUID)).status).toBe(400);
  });
});
