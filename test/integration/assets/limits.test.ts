/**
 * Assets: the upload size limit, the tariff's `max_storage` quota (across the owner's rooms, safe
 * against concurrent uploads), the limits of the upload's query, and malformed uploads.
 */
import { sql } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { assetsPath, binary, upload, uploaded, type Asset } from '../../support/assets.js';
import { cast, dbOf, headersOf, insertRoom, type Cast } from '../../support/room-content.js';
import { useTestApp } from '../../support/test-app.js';

const MAX_UPLOAD = 1024;
const QUOTA = 3000;

const app = useTestApp({
  assets: { max_upload_bytes: MAX_UPLOAD },
  tariffs: {
    default: 'basic',
    definitions: { basic: { quotas: { max_storage: QUOTA } }, pro: { quotas: { max_storage: 10 * QUOTA } }, unlimited: {} },
  },
});
let c: Cast;
beforeEach(async () => {
  c = await cast(app);
});

const listed = async (roomId = c.roomId): Promise<Asset[]> => JSON.parse((await app.request('GET', assetsPath(roomId), { headers: headersOf(c.owner) })).text_);
const storedBytes = async () => {
  const rows = await dbOf(app).selectFrom('assets').select('size').execute();
  return rows.reduce((sum, row) => sum + Number(row.size), 0);
};
const codeOf = (res: { text_: string }) => JSON.parse(res.text_).code as string;

describe('upload size limit (assets.max_upload_bytes)', () => {
  it('accepts exactly the limit and refuses one byte more with 413 payload_too_large', async () => {
    const atLimit = await upload(app, c.owner, c.roomId, binary(MAX_UPLOAD));
    expect(atLimit.status, atLimit.text_).toBe(201);
    expect(JSON.parse(atLimit.text_).size).toBe(MAX_UPLOAD);
    const over = await upload(app, c.owner, c.roomId, binary(MAX_UPLOAD + 1));
    expect(over.status).toBe(413);
    expect(codeOf(over)).toBe('payload_too_large');
    expect(await listed()).toHaveLength(1);
  });
});

describe("storage quota (the owner tariff's max_storage, across the owner's rooms)", () => {
  it('accepts uploads up to exactly the quota and refuses the byte beyond it with 413 storage_exceeded', async () => {
    await uploaded(app, c.owner, c.roomId, binary(1000));
    await uploaded(app, c.owner, c.otherRoomId, binary(1000)); // another room of the same owner counts too
    await uploaded(app, c.owner, c.roomId, binary(1000)); // exactly QUOTA now
    const over = await upload(app, c.owner, c.otherRoomId, binary(1));
    expect(over.status).toBe(413);
    expect(codeOf(over)).toBe('storage_exceeded');
    expect(await storedBytes()).toBe(QUOTA);
    expect(await listed(c.otherRoomId)).toHaveLength(1);
  });

  it('frees the space of a deleted asset', async () => {
    const assets = [];
    for (let i = 0; i < 3; i++) assets.push(await uploaded(app, c.owner, c.roomId, binary(1000)));
    expect((await upload(app, c.owner, c.roomId, binary(1000))).status).toBe(413);
    const del = await app.request('DELETE', `${assetsPath(c.roomId)}/${assets[0]!.id}`, { headers: headersOf(c.owner) });
    expect(del.status).toBe(204);
    expect((await upload(app, c.owner, c.roomId, binary(1000))).status).toBe(201);
  });

  it("counts only the owner's own rooms: another user's storage does not reduce it", async () => {
    const strangersRoom = await insertRoom(app, c.stranger);
    for (let i = 0; i < 3; i++) await uploaded(app, c.stranger, strangersRoom, binary(1000));
    for (let i = 0; i < 3; i++) await uploaded(app, c.owner, c.roomId, binary(1000));
  });

  it("applies the owner's own tariff; a tariff without max_storage does not limit", async () => {
    await dbOf(app).updateTable('users').set({ tariff_name: 'pro' }).where('id', '=', c.owner.id).execute();
    for (let i = 0; i < 4; i++) await uploaded(app, c.owner, c.roomId, binary(1000));
    expect(await storedBytes()).toBe(4000);
    await dbOf(app).updateTable('users').set({ tariff_name: 'basic' }).where('id', '=', c.owner.id).execute();
    expect((await upload(app, c.owner, c.roomId, binary(1))).status).toBe(413);
    await dbOf(app).updateTable('users').set({ tariff_name: 'unlimited' }).where('id', '=', c.owner.id).execute();
    expect((await upload(app, c.owner, c.roomId, binary(1000))).status).toBe(201);
  });

  it('lets no more concurrent uploads through than fit: 6 × 1000 bytes against a quota of 3000', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => upload(app, c.owner, i % 2 === 0 ? c.roomId : c.otherRoomId, binary(1000))));
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses).toEqual([201, 201, 201, 413, 413, 413]);
    expect(await storedBytes()).toBe(QUOTA);
  });
});

describe('the quota check under a concurrent upload (PostgreSQL)', () => {
  // PGlite runs one statement at a time, so uploads cannot interleave there; on PostgreSQL they can.
  // Another upload is simulated by a transaction that holds the owner's lock and fills the quota:
  // an upload arriving meanwhile must wait for it and then see the quota full, not the old total.
  it.skipIf(!process.env.DATABASE_URL)("waits for the owner's lock and then sees the other upload's bytes", async () => {
    const db = dbOf(app);
    let pending: ReturnType<typeof upload> | undefined;
    await db.transaction().execute(async (trx) => {
      await trx.selectFrom('users').select('id').where('id', '=', c.owner.id).forUpdate().execute();
      await trx.insertInto('assets').values({ room_id: c.roomId, filename: 'other.bin', size: QUOTA, storage_key: crypto.randomUUID() }).execute();
      pending = upload(app, c.owner, c.roomId, binary(1));
      // commit only once the upload is blocked on the lock (or has already answered, which fails below)
      let answered = false;
      const done = () => (answered = true);
      void pending.then(done, done);
      while (!answered) {
        const { waiting } = await db
          .selectFrom('pg_stat_activity' as never)
          .select((eb) => eb.fn.countAll<number>().as('waiting'))
          .where('wait_event_type' as never, '=', 'Lock' as never)
          .where('datname' as never, '=', sql`current_database()` as never)
          .executeTakeFirstOrThrow();
        if (Number(waiting) > 0) break;
      }
    });
    const res = await pending!;
    expect(res.status, res.text_).toBe(413);
    expect(codeOf(res)).toBe('storage_exceeded');
  });
});

describe('the upload query', () => {
  it('takes a file name of 255 characters and refuses 256', async () => {
    const name = (n: number) => `${'n'.repeat(n - 4)}.pdf`;
    expect((await uploaded(app, c.owner, c.roomId, binary(10), name(255))).filename).toBe(name(255));
    const tooLong = await upload(app, c.owner, c.roomId, binary(10), { filename: name(256) });
    expect(tooLong.status).toBe(400);
    expect(JSON.parse(tooLong.text_)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'filename', code: 'invalid_length' }] });
  });

  it.each([
    ['an empty file name', 'filename='],
    ['no file name', ''],
    ['a path', `filename=${encodeURIComponent('../etc/passwd')}`],
    ['a Windows path', `filename=${encodeURIComponent('C:\\boot.ini')}`],
    ['a line break', `filename=${encodeURIComponent('a\r\nx-evil: 1.txt')}`],
    ['a tab', `filename=${encodeURIComponent('a\tb.txt')}`],
    ['a NUL character', `filename=${encodeURIComponent('a\u0000b.txt')}`],
    ['an upper-case namespace', 'filename=a.txt&namespace=Uploads'],
    ['an empty namespace', 'filename=a.txt&namespace='],
    ['a namespace of 65 characters', `filename=a.txt&namespace=${'n'.repeat(65)}`],
  ])('refuses %s with 400', async (_what, query) => {
    const res = await upload(app, c.owner, c.roomId, binary(10), { query });
    expect(res.status, res.text_).toBe(400);
    expect(codeOf(res)).toBe('validation_failed');
    expect(await listed()).toEqual([]);
  });

  it('keeps a namespace of up to 64 characters and non-ASCII file names', async () => {
    const namespace = `n${'_'.repeat(62)}9`;
    const res = await upload(app, c.owner, c.roomId, binary(10), { query: `filename=${encodeURIComponent('Übersicht – 2026.pdf')}&namespace=${namespace}` });
    expect(res.status, res.text_).toBe(201);
    expect(JSON.parse(res.text_)).toMatchObject({ filename: 'Übersicht – 2026.pdf', namespace, kind: 'upload' });
  });
});

describe('malformed uploads', () => {
  // (the JSON body is valid JSON: the HTTP layer parses JSON bodies before it knows the operation)
  it.each(['text/plain', 'application/json', 'multipart/form-data; boundary=x'])('answers 415 to a body sent as %s', async (contentType) => {
    const res = await upload(app, c.owner, c.roomId, Buffer.from('{"file": "agenda.pdf"}'), { contentType });
    expect(res.status).toBe(415);
    expect(codeOf(res)).toBe('invalid_content_type');
  });

  it('answers 400 to an empty body', async () => {
    const res = await upload(app, c.owner, c.roomId, Buffer.alloc(0));
    expect(res.status).toBe(400);
    expect(codeOf(res)).toBe('validation_failed');
    expect(await listed()).toEqual([]);
  });
});
