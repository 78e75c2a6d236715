/**
 * Assets: what is stored where, and what a download sends. The instance keeps its files under a
 * configured `assets.dir` here, so the test can look at them.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assetsPath, binary, download, upload, uploaded } from '../../support/assets.js';
import { cast, dbOf, headersOf, type Cast } from '../../support/room-content.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';

let dir: string;
let app: TestApp;
let c: Cast;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'convene-assets-test-'));
  app = await startTestApp({ assets: { dir, max_upload_bytes: 1 << 20 }, tariffs: { definitions: { default: { quotas: { max_storage: 300_000 } } } } });
});
afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await app.reset();
  // reset() empties the tables; the files of earlier tests go here
  for (const file of await readdir(dir)) await rm(join(dir, file));
  c = await cast(app);
});

const storageKeyOf = async (assetId: string) =>
  (await dbOf(app).selectFrom('assets').select('storage_key').where('id', '=', assetId).executeTakeFirstOrThrow()).storage_key;

describe('download', () => {
  it('sends exactly the uploaded bytes as application/octet-stream with length and disposition', async () => {
    const bytes = binary(256 * 1024 + 17);
    const asset = await uploaded(app, c.owner, c.roomId, bytes, 'recording.webm');
    const res = await download(app, c.invitee, c.roomId, asset.id);
    expect(res.status).toBe(200);
    expect(res.bytes.equals(bytes)).toBe(true);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-length')).toBe(String(bytes.length));
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="recording.webm"');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it.each([
    ['Übersicht 2026.pdf', 'attachment; filename="_bersicht 2026.pdf"; filename*=UTF-8\'\'%C3%9Cbersicht%202026.pdf'],
    ['say "hi".txt', 'attachment; filename="say _hi_.txt"; filename*=UTF-8\'\'say%20%22hi%22.txt'],
    ['100% done;x=1.txt', 'attachment; filename="100_ done;x=1.txt"; filename*=UTF-8\'\'100%25%20done%3Bx%3D1.txt'],
    ['日本.txt', 'attachment; filename="__.txt"; filename*=UTF-8\'\'%E6%97%A5%E6%9C%AC.txt'],
  ])('names %j safely in Content-Disposition', async (filename, expected) => {
    const asset = await uploaded(app, c.owner, c.roomId, binary(5), filename);
    const res = await download(app, c.owner, c.roomId, asset.id);
    const disposition = res.headers.get('content-disposition')!;
    expect(disposition).toBe(expected);
    const encoded = /filename\*=UTF-8''(.+)$/.exec(disposition)![1]!;
    expect(decodeURIComponent(encoded)).toBe(filename);
  });

  it('answers 404 when the stored bytes are gone', async () => {
    const asset = await uploaded(app, c.owner, c.roomId, binary(5));
    await rm(join(dir, await storageKeyOf(asset.id)));
    const res = await download(app, c.owner, c.roomId, asset.id);
    expect(res.status).toBe(404);
  });
});

describe('files in assets.dir', () => {
  it("stores each upload as one file named by a server-generated key, never the user's file name", async () => {
    const bytes = binary(4096);
    const asset = await uploaded(app, c.owner, c.roomId, bytes, 'agenda.pdf');
    const key = await storageKeyOf(asset.id);
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(key).not.toBe(asset.id);
    expect(await readdir(dir)).toEqual([key]);
    expect((await readFile(join(dir, key))).equals(bytes)).toBe(true);
  });

  it('removes the file when the asset is deleted', async () => {
    const keep = await uploaded(app, c.owner, c.roomId, binary(10), 'keep.txt');
    const asset = await uploaded(app, c.owner, c.roomId, binary(10), 'drop.txt');
    const key = await storageKeyOf(asset.id);
    const res = await app.request('DELETE', `${assetsPath(c.roomId)}/${asset.id}`, { headers: headersOf(c.owner) });
    expect(res.status).toBe(204);
    expect(await readdir(dir)).toEqual([await storageKeyOf(keep.id)]);
    expect(await readdir(dir)).not.toContain(key);
  });

  it('leaves no file behind when an upload is refused for the quota', async () => {
    await uploaded(app, c.owner, c.roomId, binary(200_000));
    const before = await readdir(dir);
    const refused = await upload(app, c.owner, c.roomId, binary(100_001));
    expect(refused.status).toBe(413);
    expect(await readdir(dir)).toEqual(before);
  });

  it('removes the files of concurrent uploads that lost the race for the quota', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => upload(app, c.owner, c.roomId, binary(100_000))));
    expect(answers.filter((res) => res.status === 201)).toHaveLength(3);
    const keys = (await dbOf(app).selectFrom('assets').select('storage_key').execute()).map((row) => row.storage_key);
    expect((await readdir(dir)).sort()).toEqual(keys.sort());
  });
});
