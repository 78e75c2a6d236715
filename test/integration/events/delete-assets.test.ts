/**
 * Deleting an event deletes its room with everything in it, the bytes of its assets included (the
 * cascade only removes rows). The instance keeps its files under a configured `assets.dir` here, so
 * the test can look at them.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { createEvent, send, timedBody } from '../../support/events.js';

let dir: string;
let app: TestApp;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'convene-event-assets-'));
  app = await startTestApp({ assets: { dir } });
});
afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

async function upload(token: string, roomId: string, filename: string): Promise<void> {
  const res = await app.request('POST', `/v1/rooms/${roomId}/assets?filename=${filename}`, {
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
    body: Buffer.from(`bytes of ${filename}`),
  });
  expect(res.status, res.text_).toBe(201);
}

it('removes the files of the event room’s assets and leaves other rooms’ files alone', async () => {
  const alice = await app.login('alice');
  const doomed = await createEvent(app, alice, timedBody(), '?suppress_email_notification=true');
  const kept = await createEvent(app, alice, timedBody(), '?suppress_email_notification=true');
  await upload(alice.accessToken, doomed.room.id, 'agenda.pdf');
  await upload(alice.accessToken, doomed.room.id, 'minutes.txt');
  await upload(alice.accessToken, kept.room.id, 'keep.txt');
  expect(await readdir(dir)).toHaveLength(3);

  const res = await send(app, 'DELETE', `/events/${doomed.id}?suppress_email_notification=true`, { token: alice.accessToken });
  expect(res.status).toBe(204);
  const keptKey = await app.convene.database.db.selectFrom('assets').select('storage_key').executeTakeFirstOrThrow();
  expect(await readdir(dir)).toEqual([keptKey.storage_key]);
  expect(await app.convene.database.db.selectFrom('assets').select('room_id').execute()).toEqual([{ room_id: kept.room.id }]);
});
