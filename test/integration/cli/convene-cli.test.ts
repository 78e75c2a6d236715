/**
 * The `convene` command's admin and configuration subcommands as an operator runs them: real
 * processes on the configured database, embedded PGlite in a data directory of the test's own or,
 * with DATABASE_URL, a fresh database on that server. The fixtures (users, rooms, events, invite
 * codes) are written straight into the database between the runs; what the commands changed is read
 * back from it. (What the service then does with a disabled user or a stored tariff is
 * test/integration/users/operator-admin.test.ts.)
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../../src/config/schema.js';
import { openDatabase, type Database } from '../../../src/db/connect.js';
import * as users from '../../../src/domain/users/users.repository.js';
import { emptyServerDatabase } from '../../support/database.js';
import { commandEnv, killStarted, runConvene } from '../../support/processes.js';

const databaseUrl = process.env.DATABASE_URL || undefined;
const HOUR = 3_600_000;
/** Each run starts Node with tsx and opens the database: seconds on a loaded machine. */
const RUN_MS = 60_000;

let cwd: string;
let env: Record<string, string>;
let databaseConfig: Config['database'];
let dropDatabase: (() => Promise<void>) | undefined;

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), 'convene-cli-'));
  const dataDir = join(cwd, 'data');
  let url: string | undefined;
  if (databaseUrl) {
    const database = await emptyServerDatabase(databaseUrl, 'convene_cli');
    url = database.url;
    dropDatabase = database.drop;
  }
  env = commandEnv(cwd, url ? { DATABASE_URL: url } : { CONVENE_DATABASE__DATA_DIR: dataDir });
  databaseConfig = { url, data_dir: dataDir, in_memory: false, max_connections: 2, query_timeout_ms: 15_000 };
});

afterAll(async () => {
  await killStarted();
  await dropDatabase?.();
  rmSync(cwd, { recursive: true, force: true });
});

const convene = (...args: string[]) => runConvene(args, cwd, env, RUN_MS);

/** The database as the commands see it, opened in this process (on PGlite: holding the data directory meanwhile). */
async function withDb<T>(use: (database: Database) => Promise<T>): Promise<T> {
  const database = await openDatabase(databaseConfig);
  try {
    return await use(database);
  } finally {
    await database.close();
  }
}

interface Fixtures {
  alice: string;
  bob: string;
  oldAdhoc: { id: string; room_id: string };
  recentAdhoc: { id: string; room_id: string };
  oldPlanned: { id: string; room_id: string };
  expiredInvite: string;
  validInvites: string[];
}
let fixtures: Fixtures;

async function seed(database: Database): Promise<Fixtures> {
  const db = database.db;
  const user = async (name: string) =>
    (await users.recordLogin(db, {
      user: {
        oidc_issuer: 'https://issuer.test',
        oidc_sub: `sub-${name}`,
        email: `${name}@example.test`,
        firstname: '',
        lastname: '',
        display_name: name,
        avatar_url: '',
        language: 'en',
        tariff_name: null,
        tariff_status: 'default',
        id_token_exp: null,
      },
      groups: [],
      refreshDisplayName: false,
      refreshTariff: false,
    }))!.row.id;
  const alice = await user('alice');
  const bob = await user('bob');
  const event = async (title: string, isAdhoc: boolean, ageMs: number) => {
    const room = await db.insertInto('rooms').values({ created_by: alice }).returning('id').executeTakeFirstOrThrow();
    const created_at = new Date(Date.now() - ageMs);
    const row = await db
      .insertInto('events')
      .values({ room_id: room.id, created_by: alice, updated_by: alice, title, is_time_independent: true, is_adhoc: isAdhoc, created_at })
      .returning(['id', 'room_id'])
      .executeTakeFirstOrThrow();
    return row;
  };
  const oldAdhoc = await event('Instant meeting', true, 48 * HOUR);
  const recentAdhoc = await event('Instant meeting, today', true, 2 * HOUR);
  const oldPlanned = await event('Planned meeting', false, 48 * HOUR);
  const invite = async (expiration: Date | null) =>
    (
      await db
        .insertInto('room_invites')
        .values({ room_id: oldPlanned.room_id, created_by: alice, updated_by: alice, expiration })
        .returning('code')
        .executeTakeFirstOrThrow()
    ).code;
  const expiredInvite = await invite(new Date(Date.now() - HOUR));
  const validInvites = [await invite(new Date(Date.now() + HOUR)), await invite(null)];
  return { alice, bob, oldAdhoc, recentAdhoc, oldPlanned, expiredInvite, validInvites };
}

describe('convene on a database', { timeout: 240_000 }, () => {
  it('refuses the admin commands while migrations are pending, then migrates', async () => {
    const early = await convene('users', 'list');
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/has \d+ migration\(s\) pending \(2026_11_21_0001_initial, .*\); run `convene migrate` first\n$/);

    const migrated = await convene('migrate');
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toMatch(/: applied 2026_11_21_0001_initial, /);
    expect((await convene('migrate')).stdout).toMatch(/: already up to date\n$/);
    fixtures = await withDb(seed);
  });

  it('creates a tariff, assigns it by e-mail address and lists the tariffs with their users', async () => {
    const created = await convene(
      'tariffs',
      'create',
      'pro',
      '--quota',
      'room_participant_limit=50',
      '--quota',
      'max_storage=1073741824',
      '--disable-module',
      'timer',
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^created tariff pro \(id [0-9a-f-]{36}\)/);
    const again = await convene('tariffs', 'create', 'pro');
    expect([again.code, again.stderr]).toEqual([1, 'convene: the tariff "pro" exists already\n']);

    const assigned = await convene('tariffs', 'assign', 'pro', 'Alice@Example.test');
    expect(assigned.code, assigned.stderr).toBe(0);
    const unknown = await convene('tariffs', 'assign', 'gold', 'alice@example.test');
    expect([unknown.code, unknown.stderr]).toEqual([1, 'convene: unknown tariff "gold" (tariffs: default, pro)\n']);

    const listed = await convene('tariffs', 'list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const listing = JSON.parse(listed.stdout) as Array<{ tariff: { name: string; quotas: object; enabled_modules: string[] }; source: string; users: number }>;
    expect(listing.map(({ tariff, source, users }) => [tariff.name, source, users])).toEqual([
      ['default', 'configuration', 1],
      ['pro', 'database', 1],
    ]);
    expect(listing[1]!.tariff.quotas).toEqual({ room_participant_limit: 50, max_storage: 1073741824 });
    expect(listing[1]!.tariff.enabled_modules).not.toContain('timer');
    const table = await convene('tariffs', 'list');
    expect(table.stdout.split('\n')[0]).toBe('name\tsource\tdefault\tusers\tquotas\tswitched off\tid');
  });

  it('disables and enables users by e-mail address or id, and lists them', async () => {
    const disabled = await convene('users', 'disable', 'bob@example.test');
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stdout).toBe(`disabled user ${fixtures.bob} (bob@example.test)\n`);
    const missing = await convene('users', 'disable', 'carol@example.test');
    expect([missing.code, missing.stderr]).toEqual([1, 'convene: no user has the e-mail address carol@example.test\n']);

    const listed = await convene('users', 'list', '--json');
    const rows = JSON.parse(listed.stdout) as Array<{ id: string; email: string; tariff: string | null; disabled_at: string | null }>;
    expect(rows.map(({ email, tariff, disabled_at }) => [email, tariff, disabled_at === null])).toEqual([
      ['alice@example.test', 'pro', true],
      ['bob@example.test', null, false],
    ]);
    expect((await convene('users', 'enable', fixtures.bob)).code).toBe(0);
    const table = await convene('users', 'list');
    expect(table.stdout).toMatch(new RegExp(`^${fixtures.bob}\tbob@example.test\tbob\t\\(default\\)\tenabled\t`, 'm'));
  });

  it('adds, lists, resumes and removes operator webhook subscriptions, refusing internal addresses', async () => {
    const refused = await convene('webhooks', 'add', 'https://169.254.169.254/latest/meta-data/');
    expect([refused.code, refused.stderr]).toEqual([1, 'convene: This URL cannot receive webhooks: the address is loopback, link-local or private\n']);
    const unknownType = await convene('webhooks', 'add', 'https://192.0.2.10/hooks', '--event', 'room.exploded');
    expect(unknownType.code).toBe(2);

    const added = await convene('webhooks', 'add', 'https://192.0.2.10/hooks', '--event', 'timer.started', '--description', 'audit');
    expect(added.code, added.stderr).toBe(0);
    const [, id, secret] =
      /^added operator subscription ([0-9a-f-]{36}) for timer.started\nsecret \(shown this once\): (whsec_\S+)\n$/.exec(added.stdout) ?? [];
    expect(secret).toBeDefined();
    const stored = await withDb((database) => database.db.selectFrom('webhook_subscriptions').selectAll().execute());
    expect(stored.map((row) => [row.id, row.owner, row.secret, row.event_types])).toEqual([[id, null, secret, ['timer.started']]]);

    const listed = JSON.parse((await convene('webhooks', 'list', '--json')).stdout) as Array<{ id: string; status: string; secret?: string }>;
    expect(listed.map((row) => [row.id, row.status, row.secret])).toEqual([[id, 'active', undefined]]);
    expect((await convene('webhooks', 'resume', id!)).stdout).toBe(`resumed operator subscription ${id}\n`);
    expect((await convene('webhooks', 'deliveries', id!)).stdout.split('\n')[0]).toBe('message\ttype\tstatus\tattempts\tlast status\tlast error\tcreated');
    expect((await convene('webhooks', 'remove', id!)).code).toBe(0);
    const again = await convene('webhooks', 'remove', id!);
    expect([again.code, again.stderr]).toEqual([1, 'convene: no operator subscription with this id\n']);
  });

  it('lists what the clean-up would delete on a dry run, and deletes nothing', async () => {
    const dry = await convene('cleanup', '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('would delete 1 ad-hoc event(s) created more than 24 hour(s) ago, with their rooms\n');
    expect(dry.stdout).toContain(`  event ${fixtures.oldAdhoc.id} room ${fixtures.oldAdhoc.room_id} created `);
    expect(dry.stdout).toContain('would delete 1 expired invite code(s)\n');
    expect(dry.stdout).toContain(`  invite ${fixtures.expiredInvite} room ${fixtures.oldPlanned.room_id} expired `);
    const counts = await withDb(async ({ db }) => [
      (await db.selectFrom('events').select('id').execute()).length,
      (await db.selectFrom('room_invites').select('code').execute()).length,
    ]);
    expect(counts).toEqual([3, 3]);
  });

  it('deletes past ad-hoc events with their rooms and expired invite codes, and nothing else', async () => {
    const done = await convene('cleanup');
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain('deleted 1 ad-hoc event(s)');
    expect(done.stdout).toContain('deleted 1 expired invite code(s)');
    const left = await withDb(async ({ db }) => ({
      events: (await db.selectFrom('events').select('id').orderBy('title').execute()).map((row) => row.id),
      rooms: (await db.selectFrom('rooms').select('id').execute()).map((row) => row.id).sort(),
      invites: (await db.selectFrom('room_invites').select('code').execute()).map((row) => row.code).sort(),
    }));
    expect(left.events).toEqual([fixtures.recentAdhoc.id, fixtures.oldPlanned.id]);
    expect(left.rooms).toEqual([fixtures.recentAdhoc.room_id, fixtures.oldPlanned.room_id].sort());
    expect(left.invites).toEqual([...fixtures.validInvites].sort());
    // a retention of 0 takes today's ad-hoc meeting too
    expect((await convene('cleanup', '--dry-run', '--adhoc-retention-hours', '0')).stdout).toContain('would delete 1 ad-hoc event(s)');
  });

  it.skipIf(databaseUrl)('refuses while another process holds the embedded data directory', async () => {
    await withDb(async () => {
      const refused = await convene('users', 'list');
      expect(refused.code).toBe(2);
      expect(refused.stderr).toBe(
        `convene: the data directory ${databaseConfig.data_dir} is in use by process ${process.pid}; stop it, or delete ${join(databaseConfig.data_dir, '.lock')} if it is gone\n`,
      );
    });
  });
});

describe('convene check-config and usage', { timeout: 240_000 }, () => {
  it('checks the configuration without creating anything', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'convene-check-'));
    try {
      const ok = await runConvene(['check-config'], dir, commandEnv(dir));
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(/^configuration OK\n {2}listens on 0\.0\.0\.0:11311\n {2}database: PGlite in \.\/data\n/);
      const bad = await runConvene(['check-config'], dir, commandEnv(dir, { CONVENE_HTTP__PORT: 'eighty' }));
      expect([bad.code, bad.stderr]).toEqual([2, 'configuration: http.port must be integer (from CONVENE_HTTP__PORT)\n']);
      const production = await runConvene(['check-config'], dir, commandEnv(dir, { NODE_ENV: 'production' }));
      expect(production.code).toBe(2);
      expect(production.stderr).toContain('The development identity provider refuses to run with NODE_ENV=production');
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers wrong arguments with the usage and exit code 2', async () => {
    const unknown = await convene('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^convene: unknown command "frobnicate"\nusage: convene <command>/);
    const noName = await convene('tariffs', 'create');
    expect([noName.code, noName.stderr.split('\n')[0]]).toEqual([2, 'convene: usage: convene tariffs list [--json]']);
    const badQuota = await convene('tariffs', 'create', 'x', '--quota', 'max_storage=lots');
    expect(badQuota.code).toBe(2);
    expect(badQuota.stderr).toContain('--quota takes <quota>=<whole number>');
    const badOption = await convene('cleanup', '--force');
    expect(badOption.code).toBe(2);
    expect(badOption.stderr).toContain("Unknown option '--force'");
  });
});
