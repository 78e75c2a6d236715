/**
 * Where the bytes of room assets live. The database keeps each asset's metadata and its
 * `storage_key`; this interface keeps the bytes under that key. Keys are server-generated uuids,
 * never user file names, so a key cannot climb out of the storage directory.
 *
 * The default implementation writes files under `[assets] dir` (default `<database.data_dir>/assets`);
 * with an in-memory database (tests) it uses a fresh temporary directory removed on close.
 */
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, open, rename, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config/schema.js';

export interface AssetStorage {
  /** Stores `bytes` under `key`, replacing what was there; readers never see a partial file. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** The bytes under `key`, or undefined when there are none. */
  get(key: string): Promise<Readable | undefined>;
  /** Removes the bytes under `key`; a missing key is not an error (deletes may be retried). */
  delete(key: string): Promise<void>;
  /** Releases what the storage holds (the temporary directory of an in-memory instance). */
  close(): Promise<void>;
}

/** Only the keys the server generates: no separators, no dots, nothing a path could misread. */
const KEY_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function checkKey(key: string): string {
  if (!KEY_PATTERN.test(key)) throw new Error(`invalid asset storage key: ${JSON.stringify(key)}`);
  return key;
}

export function newStorageKey(): string {
  return randomUUID();
}

export async function createFileAssetStorage(dir: string, options: { removeOnClose?: boolean } = {}): Promise<AssetStorage> {
  await mkdir(dir, { recursive: true });
  const pathOf = (key: string) => join(dir, checkKey(key));

  return {
    async put(key, bytes) {
      const target = pathOf(key);
      // temp file + rename: a crash or a concurrent reader never sees half an asset
      const temp = join(dir, `.tmp-${randomUUID()}`);
      try {
        const file = await open(temp, 'wx');
        try {
          await file.writeFile(bytes);
          await file.sync(); // the bytes are on disk before the row that points at them is committed
        } finally {
          await file.close();
        }
        await rename(temp, target);
      } catch (err) {
        await rm(temp, { force: true });
        throw err;
      }
    },
    async get(key) {
      const path = pathOf(key);
      const stream = createReadStream(path);
      // open first, so that a missing file is an answer here and not an error mid-response
      return new Promise<Readable | undefined>((resolve, reject) => {
        let opened = false;
        stream.once('open', () => {
          opened = true;
          resolve(stream);
        });
        // kept after opening too: a read error mid-download stops the download instead of crashing the process
        stream.on('error', (err: NodeJS.ErrnoException) => {
          if (opened) return;
          if (err.code === 'ENOENT') resolve(undefined);
          else reject(err);
        });
      });
    },
    async delete(key) {
      try {
        await unlink(pathOf(key));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    },
    async close() {
      if (options.removeOnClose) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The storage a configuration asks for: `assets.dir`, else a temp dir (in-memory database), else `<data_dir>/assets`. */
export async function assetStorageFromConfig(config: Config): Promise<AssetStorage> {
  if (config.assets.dir) return createFileAssetStorage(config.assets.dir);
  if (config.database.in_memory) {
    const dir = await mkdtemp(join(tmpdir(), 'convene-assets-'));
    return createFileAssetStorage(dir, { removeOnClose: true });
  }
  return createFileAssetStorage(join(config.database.data_dir, 'assets'));
}
