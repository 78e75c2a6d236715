/**
 * The hot queries' preparation (src/db/prepared.ts) on whichever backend the environment selects:
 * a query built once answers every call with that call's arguments, a builder that cannot be
 * prepared is refused at its first use, a query of several shapes is built once per shape, and the
 * query is a named statement that a column added meanwhile (another instance migrating first) does
 * not break.
 */
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { openDatabase, type Database } from '../../src/db/connect.js';
import { executePrepared, preparedQuery, preparedShapes, sharingInFlight, type PreparedQuery } from '../../src/db/prepared.js';
import type { DB } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let testDb: TestDatabase;
let db: Kysely<DB>;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.database.db;
});
afterAll(() => testDb?.close());
beforeEach(() => testDb.reset());

async function insertUser(name: string) {
  return db
    .insertInto('users')
    .values({ oidc_issuer: 'https://idp.test', oidc_sub: name, email: `${name}@example.test`, display_name: name })
    .returning(['id', 'display_name'])
    .executeTakeFirstOrThrow();
}

const userByIdAndIssuer = preparedQuery(['id', 'issuer'], (db, { id, issuer }: { id: string; issuer: string }) =>
  db.selectFrom('users').select(['id', 'display_name']).where('id', '=', id).where('oidc_issuer', '=', issuer),
);

describe('preparedQuery', () => {
  it('answers each call with its own arguments, on the database or in a transaction', async () => {
    const ada = await insertUser('ada');
    const bob = await insertUser('bob');
    expect(await userByIdAndIssuer.takeFirst(db, { id: ada.id, issuer: 'https://idp.test' })).toEqual(ada);
    expect(await userByIdAndIssuer.execute(db, { id: bob.id, issuer: 'https://idp.test' })).toEqual([bob]);
    expect(await userByIdAndIssuer.takeFirst(db, { id: bob.id, issuer: 'https://other.test' })).toBeUndefined();
    await db.transaction().execute(async (trx) => {
      expect(await userByIdAndIssuer.takeFirst(trx, { id: ada.id, issuer: 'https://idp.test' })).toEqual(ada);
    });
  });

  it('keeps the constants the builder put in beside the arguments', async () => {
    await insertUser('ada');
    await insertUser('bob');
    const firstNamed = preparedQuery(['issuer'], (db, { issuer }: { issuer: string }) =>
      db.selectFrom('users').select('display_name').where('oidc_issuer', '=', issuer).orderBy('display_name').limit(1),
    );
    expect(await firstNamed.execute(db, { issuer: 'https://idp.test' })).toEqual([{ display_name: 'ada' }]);
  });

  it('refuses at its first use a builder that writes an argument into the SQL text', async () => {
    const raw = preparedQuery(['column'], (db, { column }: { column: string }) => db.selectFrom('users').select(sql.ref<string>(column).as('value')));
    await expect(raw.execute(db, { column: 'email' })).rejects.toThrow(/must be parameters, not SQL text/);
  });

  it('refuses at its first use a builder that leaves an argument out', async () => {
    const ignoring = preparedQuery(['id', 'unused'], (db, { id }: { id: string; unused: string }) => db.selectFrom('users').select('id').where('id', '=', id));
    await expect(ignoring.execute(db, { id: '6f1c1f0e-8d0f-4b8e-9e55-0c5a2b8a1f00', unused: 'x' })).rejects.toThrow(/each be a parameter: unused/);
  });

  it('refuses at its first use a query that selects *', async () => {
    const star = preparedQuery(['id'], (db, { id }: { id: string }) => db.selectFrom('users').selectAll().where('id', '=', id));
    await expect(star.execute(db, { id: '6f1c1f0e-8d0f-4b8e-9e55-0c5a2b8a1f00' })).rejects.toThrow(/must name its columns/);
    const starOfTable = preparedQuery(['id'], (db, { id }: { id: string }) => db.selectFrom('users').selectAll('users').where('id', '=', id));
    await expect(starOfTable.execute(db, { id: '6f1c1f0e-8d0f-4b8e-9e55-0c5a2b8a1f00' })).rejects.toThrow(/must name its columns/);
  });
});

describe('preparedShapes', () => {
  it('builds each shape once and answers each call with its own values', async () => {
    const ada = await insertUser('ada');
    const bob = await insertUser('bob');
    let builds = 0;
    const byName = preparedShapes(
      (filter: { name?: string }) => (filter.name === undefined ? 'all' : 'named'),
      (filter: { name?: string }) => ({ name: filter.name }),
      (db, filter, values) => {
        builds++;
        const query = db.selectFrom('users').select(['id', 'display_name']).orderBy('display_name');
        return filter.name === undefined ? query : query.where('display_name', '=', values.name!);
      },
    );
    expect(await byName.execute(db, { name: 'bob' })).toEqual([bob]);
    expect(await byName.execute(db, { name: 'ada' })).toEqual([ada]);
    expect(await byName.execute(db, {})).toEqual([ada, bob]);
    expect(await byName.execute(db, { name: 'cyd' })).toEqual([]);
    expect(builds).toBe(2);
  });
});

describe('executePrepared', () => {
  it('runs a query built per call', async () => {
    const ada = await insertUser('ada');
    expect(await executePrepared(db, db.selectFrom('users').select(['id', 'display_name']).where('oidc_sub', '=', 'ada'))).toEqual([ada]);
  });

  it('refuses a query that selects *', async () => {
    await expect(executePrepared(db, db.selectFrom('users').selectAll())).rejects.toThrow(/must name its columns/);
  });
});

describe('named statements', () => {
  /** One connection, whose prepared statements can be seen: PGlite is one; on a server, a pool of one. */
  let single: Database;
  let ownsSingle = false;
  beforeAll(async () => {
    if (!process.env.DATABASE_URL) {
      single = testDb.database;
      return;
    }
    const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(db);
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${rows[0]!.name}`;
    single = await openDatabase({ url: url.toString(), data_dir: '', in_memory: false, max_connections: 1, query_timeout_ms: 15_000 });
    ownsSingle = true;
  });
  afterAll(() => (ownsSingle ? single.close() : undefined));

  const prepared = async () => (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(single.db)).rows;

  /** Used by this test alone, so that its statement is prepared here or nowhere. */
  const userByEmail = preparedQuery(['email'], (db, { email }: { email: string }) =>
    db.selectFrom('users').select(['id', 'display_name']).where('email', '=', email),
  );
  const ofUserByEmail = async () => (await prepared()).filter((statement) => statement.statement.includes('where "email" = $1'));

  it('sends a prepared query as a named statement, and any other query unnamed', async () => {
    const ada = await insertUser('ada');
    await sql`select id from users where "email" = ${'ada@example.test'}`.execute(single.db);
    expect(await ofUserByEmail()).toEqual([]);
    expect(await userByEmail.takeFirst(single.db, { email: 'ada@example.test' })).toEqual(ada);
    expect(await userByEmail.takeFirst(single.db, { email: 'ada@example.test' })).toEqual(ada);
    const statements = await ofUserByEmail();
    expect(statements).toHaveLength(1);
    expect(statements[0]!.name).toMatch(/^convene_[0-9a-f]{20}$/);
  });

  it('still answers after a migration added a column to the table it reads', async () => {
    const ada = await insertUser('ada');
    expect(await userByIdAndIssuer.takeFirst(single.db, { id: ada.id, issuer: 'https://idp.test' })).toEqual(ada);
    await sql`alter table users add column prepared_test_extra text`.execute(db);
    try {
      expect(await userByIdAndIssuer.takeFirst(single.db, { id: ada.id, issuer: 'https://idp.test' })).toEqual(ada);
    } finally {
      await sql`alter table users drop column prepared_test_extra`.execute(db);
    }
  });
});

describe('sharingInFlight', () => {
  /** `userByIdAndIssuer` shared in flight, counting the reads it sends. */
  function counted() {
    const sent: string[] = [];
    const read: PreparedQuery<{ id: string; issuer: string }, { id: string; display_name: string }> = {
      execute: (db, args) => {
        sent.push(args.id);
        return userByIdAndIssuer.execute(db, args);
      },
      takeFirst: () => {
        throw new Error('sharingInFlight goes through execute');
      },
    };
    return { sent, shared: sharingInFlight(read, ({ id, issuer }) => `${id} ${issuer}`) };
  }

  it('answers concurrent calls with the same arguments from one read, its rows frozen; other arguments read for themselves', async () => {
    const ada = await insertUser('ada');
    const bob = await insertUser('bob');
    const { sent, shared } = counted();
    const args = { id: ada.id, issuer: 'https://idp.test' };
    const answers = await Promise.all([
      shared.takeFirst(db, args),
      shared.takeFirst(db, args),
      shared.takeFirst(db, { ...args, id: bob.id }),
      shared.takeFirst(db, args),
    ]);
    expect(answers).toEqual([ada, ada, bob, ada]);
    expect(sent).toEqual([ada.id, bob.id]);
    expect(answers[1]).toBe(answers[0]);
    expect(Object.isFrozen(answers[0])).toBe(true);
  });

  it('reads again once the shared read is answered, and sees what changed meanwhile', async () => {
    const ada = await insertUser('ada');
    const { sent, shared } = counted();
    const args = { id: ada.id, issuer: 'https://idp.test' };
    expect(await shared.takeFirst(db, args)).toEqual(ada);
    await db.updateTable('users').set({ display_name: 'Ada L.' }).where('id', '=', ada.id).execute();
    expect(await shared.takeFirst(db, args)).toEqual({ ...ada, display_name: 'Ada L.' });
    expect(sent).toHaveLength(2);
  });

  it('shares nothing inside a transaction: each call reads in its own snapshot', async () => {
    const ada = await insertUser('ada');
    const { sent, shared } = counted();
    const args = { id: ada.id, issuer: 'https://idp.test' };
    await db.transaction().execute(async (trx) => {
      expect(await Promise.all([shared.takeFirst(trx, args), shared.takeFirst(trx, args)])).toEqual([ada, ada]);
    });
    expect(sent).toHaveLength(2);
  });
});
