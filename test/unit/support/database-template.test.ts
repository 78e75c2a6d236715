/**
 * The key of the cached PGlite template (test/support/database.ts): a checkout whose schema could
 * differ must not load another's template. Checked on a stand-in checkout in a temporary directory:
 * the key follows migrate.ts (which lists the migrations that run) and every file under
 * src/db/migrations/, and nothing else of src/.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { templateCacheFile } from '../../support/database.js';

describe('the PGlite template cache key', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  /** A checkout with the two packages, migrate.ts and one migration. */
  function checkout(): { root: string; write(path: string, text: string): void } {
    const root = mkdtempSync(join(tmpdir(), 'convene-template-key-'));
    roots.push(root);
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    write('node_modules/@electric-sql/pglite/package.json', '{"version":"1"}');
    write('node_modules/kysely/package.json', '{"version":"1"}');
    write('src/db/migrate.ts', "import * as initial from './migrations/0001_initial.js';");
    write('src/db/migrations/0001_initial.ts', 'create table a');
    return { root, write };
  }

  it('changes when migrate.ts lists another migration, though the migration files stay', () => {
    const { root, write } = checkout();
    write('src/db/migrations/0002_more.ts', 'create table b');
    const before = templateCacheFile(root);
    write('src/db/migrate.ts', "import * as initial from './migrations/0001_initial.js';\nimport * as more from './migrations/0002_more.js';");
    expect(templateCacheFile(root)).not.toBe(before);
  });

  it('changes with a migration, also one in a folder of its own, and with the packages', () => {
    const { root, write } = checkout();
    const keys = [templateCacheFile(root)];
    write('src/db/migrations/0001_initial.ts', 'create table a (id int)');
    keys.push(templateCacheFile(root));
    write('src/db/migrations/parts/0002_part.ts', 'create table b');
    keys.push(templateCacheFile(root));
    write('node_modules/kysely/package.json', '{"version":"2"}');
    keys.push(templateCacheFile(root));
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('stays the same for the same schema sources, whatever else of src/ changes', () => {
    const { root, write } = checkout();
    const before = templateCacheFile(root);
    write('src/db/schema.ts', 'export interface DB {}');
    expect(templateCacheFile(root)).toBe(before);
    expect(before).toMatch(/node_modules\/\.cache\/convene\/pglite-template-[0-9a-f]{16}\.tar$/);
  });
});
