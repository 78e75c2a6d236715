import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { assetStorageFromConfig, createFileAssetStorage, newStorageKey, type AssetStorage } from '../../../src/domain/assets/asset-storage.js';

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

let dir: string;
let storage: AssetStorage;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'asset-storage-test-'));
  storage = await createFileAssetStorage(dir);
});
afterEach(async () => {
  await storage.close();
  await rm(dir, { recursive: true, force: true });
});

describe('file asset storage', () => {
  it('gives back what was put, replaces on a second put, and deletes', async () => {
    const key = newStorageKey();
    await storage.put(key, Buffer.from('first version'));
    await storage.put(key, Buffer.from('second'));
    expect((await readAll((await storage.get(key))!)).toString()).toBe('second');
    await storage.delete(key);
    expect(await storage.get(key)).toBeUndefined();
    expect(await readdir(dir)).toEqual([]);
  });

  it('answers undefined for a missing key and deletes a missing key without error', async () => {
    const key = newStorageKey();
    expect(await storage.get(key)).toBeUndefined();
    await expect(storage.delete(key)).resolves.toBeUndefined();
  });

  it('leaves no temporary file behind', async () => {
    const keys = [newStorageKey(), newStorageKey()];
    await Promise.all(keys.map((key) => storage.put(key, Buffer.alloc(100_000, 7))));
    expect((await readdir(dir)).sort()).toEqual(keys.sort());
  });

  it.each(['../escape', 'a/b', '', 'agenda.pdf', `${newStorageKey()}/..`, newStorageKey().toUpperCase()])(
    'refuses the key %j: only server-generated keys name files',
    async (key) => {
      await expect(storage.put(key, Buffer.from('x'))).rejects.toThrow(/invalid asset storage key/);
      await expect(storage.get(key)).rejects.toThrow(/invalid asset storage key/);
      await expect(storage.delete(key)).rejects.toThrow(/invalid asset storage key/);
      expect(await readdir(dir)).toEqual([]);
    },
  );
});

describe('assetStorageFromConfig', () => {
  const config = (overrides: Record<string, unknown>) => loadConfig({ file: false, env: {}, overrides });

  it('uses assets.dir when set', async () => {
    const configured = await assetStorageFromConfig(config({ assets: { dir: join(dir, 'configured') } }));
    const key = newStorageKey();
    await configured.put(key, Buffer.from('x'));
    expect(await readdir(join(dir, 'configured'))).toEqual([key]);
    await configured.close();
    expect(await readdir(join(dir, 'configured'))).toEqual([key]); // a configured directory is kept
  });

  it('defaults to <data_dir>/assets', async () => {
    const byDataDir = await assetStorageFromConfig(config({ database: { data_dir: dir } }));
    const key = newStorageKey();
    await byDataDir.put(key, Buffer.from('x'));
    expect(await readdir(join(dir, 'assets'))).toEqual([key]);
    await byDataDir.close();
  });

  it('uses a temporary directory, removed on close, with an in-memory database', async () => {
    const temporary = await assetStorageFromConfig(config({ database: { in_memory: true, data_dir: dir } }));
    const key = newStorageKey();
    await temporary.put(key, Buffer.from('x'));
    const stream = (await temporary.get(key)) as Readable & { path: string };
    const tempDir = join(stream.path, '..');
    stream.destroy();
    expect(tempDir.startsWith(tmpdir())).toBe(true);
    expect(await readdir(dir)).toEqual([]); // nothing under data_dir
    await temporary.close();
    await expect(stat(tempDir)).rejects.toThrow(/ENOENT/);
  });
});
