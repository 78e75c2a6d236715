/**
 * Page cursors are signed with HMAC-SHA256 of the configured key, its first 16 bytes: what one
 * instance signs, another with the same key (text or bytes, this version or an earlier one) reads.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../../src/domain/events/cursor.js';

const signed = (key: string, data: string) => createHmac('sha256', key).update(data).digest().subarray(0, 16).toString('base64url');

describe('page cursors', () => {
  it('carry the HMAC-SHA256 of their payload under the key, whether it is given as text, bytes or read later', async () => {
    const key = 'a cursor secret of at least 32 characters ✓';
    for (const given of [key, Buffer.from(key, 'utf8'), () => Promise.resolve(key)]) {
      const cursor = await createCursorCodec(given).encode('events', { i: 1 });
      const [data, signature] = cursor.split('.');
      expect(signature).toBe(signed(key, data!));
      await expect(createCursorCodec(key).decode('events', cursor, 'after')).resolves.toEqual({ k: 'events', i: 1 });
    }
  });

  it('refuses a cursor signed under another key, or of another list', async () => {
    const cursor = await createCursorCodec('one key of at least thirty-two characters').encode('events', { i: 1 });
    await expect(createCursorCodec('another key of at least thirty-two characters').decode('events', cursor, 'after')).rejects.toMatchObject({
      code: 'validation_failed',
    });
    await expect(createCursorCodec('one key of at least thirty-two characters').decode('instances', cursor, 'cursor')).rejects.toMatchObject({
      code: 'validation_failed',
    });
  });

  it('asks a key source that failed again on the next use', async () => {
    let calls = 0;
    const codec = createCursorCodec(() => (++calls === 1 ? Promise.reject(new Error('database down')) : Promise.resolve('the key, read on the second try ok')));
    await expect(codec.encode('events', { i: 1 })).rejects.toThrow('database down');
    await expect(codec.encode('events', { i: 1 })).resolves.toMatch(/\./);
    expect(calls).toBe(2);
  });
});
