/**
 * The hot queries, built once and prepared (docs/architecture.md §4: "Prepare the hot queries").
 *
 * Kysely builds and compiles a query on every call; a `preparedQuery` is built once, with
 * placeholder arguments, and afterwards only takes new parameters. It also runs as a named prepared
 * statement (connect.ts names it by its SQL text): parsed and planned once per connection, then
 * only bound and executed. Measured here for the room-access query: 120 µs of PostgreSQL's CPU per
 * execution unnamed, 40 µs named; on PGlite 290 µs and 100 µs. `executePrepared` prepares a query
 * built per call: it skips the database's parse and plan, not Kysely's build. `preparedShapes`
 * keeps one prepared query per shape of a query whose shape depends on its filters.
 *
 * A prepared query:
 * - names its columns, never `*`: a statement's result type is fixed when it is prepared, and after
 *   a migration adds a column (another instance upgrading first) PostgreSQL would refuse to run a
 *   `select *` one ("cached plan must not change result type") until this instance restarts;
 * - for `preparedQuery`, does not branch on its arguments' values: the builder runs once, with
 *   placeholders in their place.
 * A query that selects `*`, or whose arguments are not all parameters, fails at its first use.
 */
import { createHash } from 'node:crypto';
import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { DB } from './schema.js';

/** Named statements at most (a safety bound: the code has a fixed set of shapes); the rest run unnamed. */
const MAX_STATEMENTS = 256;
const statementNames = new Map<string, string>();

/** The statement name of a prepared query's SQL; undefined for every other query (connect.ts). */
export function statementNameOf(sql: string): string | undefined {
  return statementNames.get(sql);
}

const STAR = /(select|,)\s*("[^"]+"\.)?\*/i;

function nameStatement(sql: string): void {
  if (statementNames.has(sql)) return;
  if (STAR.test(sql)) throw new Error(`a prepared query must name its columns, not select *: ${sql}`);
  if (statementNames.size >= MAX_STATEMENTS) return;
  statementNames.set(sql, `convene_${createHash('sha256').update(sql).digest('hex').slice(0, 20)}`);
}

/** Runs a query built per call as a named statement; answers its rows. */
export async function executePrepared<R>(db: Kysely<DB>, query: Compilable<R>): Promise<R[]> {
  const compiled = query.compile();
  nameStatement(compiled.sql);
  return (await db.executeQuery(compiled)).rows;
}

export interface PreparedQuery<A extends Record<string, unknown>, R> {
  execute(db: Kysely<DB>, args: A): Promise<R[]>;
  takeFirst(db: Kysely<DB>, args: A): Promise<R | undefined>;
}

/**
 * A query built once by `build` with a placeholder for each of `argNames`; every execution passes
 * the real values in their places (`db` may be a transaction).
 */
export function preparedQuery<A extends Record<string, unknown>, R>(
  argNames: readonly (keyof A & string)[],
  build: (db: Kysely<DB>, args: A) => Compilable<R>,
): PreparedQuery<A, R> {
  let compiled: { sql: string; parameters: ((args: A) => unknown)[] } | undefined;

  const compile = (db: Kysely<DB>) => {
    const placeholders = new Map(argNames.map((name) => [`\u0000placeholder:${name}`, name]));
    const standIns = Object.fromEntries([...placeholders].map(([placeholder, name]) => [name, placeholder])) as A;
    const query = build(db, standIns).compile();
    if ([...placeholders.keys()].some((placeholder) => query.sql.includes(placeholder))) {
      throw new Error(`a prepared query's arguments must be parameters, not SQL text: ${query.sql}`);
    }
    const parameters = query.parameters.map((value) => {
      const name = typeof value === 'string' ? placeholders.get(value) : undefined;
      return name === undefined ? () => value : (args: A) => args[name];
    });
    const unused = [...placeholders].filter(([placeholder]) => !query.parameters.includes(placeholder)).map(([, name]) => name);
    if (unused.length > 0) throw new Error(`a prepared query's arguments must each be a parameter: ${unused.join(', ')}`);
    nameStatement(query.sql);
    return { sql: query.sql, parameters };
  };

  const execute = async (db: Kysely<DB>, args: A): Promise<R[]> => {
    compiled ??= compile(db);
    const { sql, parameters } = compiled;
    return (
      await db.executeQuery(
        CompiledQuery.raw(
          sql,
          parameters.map((parameter) => parameter(args)),
        ),
      )
    ).rows as R[];
  };
  return { execute, takeFirst: async (db, args) => (await execute(db, args))[0] };
}

/**
 * The read `query` with its concurrent executions shared: a call whose arguments (`keyOf`) match
 * one in flight on the same database waits for that one's rows instead of sending its own. A join
 * storm's hundreds of guests arrive with the same invite code within milliseconds; every round trip
 * to PostgreSQL costs this process a wake-up of the server, the largest part of a ticket start's CPU
 * (scripts/bench/RESULTS.md). A shared answer is as old as the read it joined, at most a round
 * trip older than the call: no older than a read that raced with the same write would have been.
 * Inside a transaction each call reads for itself (its snapshot, its connection). The rows are
 * frozen: several callers hold the same objects.
 */
export function sharingInFlight<A extends Record<string, unknown>, R>(query: PreparedQuery<A, R>, keyOf: (args: A) => string): PreparedQuery<A, R> {
  const inFlight = new WeakMap<Kysely<DB>, Map<string, Promise<R[]>>>();
  const execute = (db: Kysely<DB>, args: A): Promise<R[]> => {
    if (db.isTransaction) return query.execute(db, args);
    const reads = inFlight.get(db) ?? inFlight.set(db, new Map()).get(db)!;
    const key = keyOf(args);
    const pending = reads.get(key);
    if (pending) return pending;
    const read = query
      .execute(db, args)
      .then((rows) => rows.map((row) => Object.freeze(row)))
      .finally(() => reads.delete(key));
    reads.set(key, read);
    return read;
  };
  return { execute, takeFirst: async (db, args) => (await execute(db, args))[0] };
}

/**
 * A query whose shape depends on its input (which filters are set): one `preparedQuery` per shape,
 * built on the shape's first use. `shapeOf` names everything `build` branches on (the code's few
 * shapes, never a value from the input); `valuesOf` the values `build` passes as parameters, a
 * value left undefined being one the shape does not use. `build` reads the shape from its input and
 * every value from its placeholders.
 */
export function preparedShapes<I, A extends Record<string, unknown>, R>(
  shapeOf: (input: I) => string,
  valuesOf: (input: I) => A,
  build: (db: Kysely<DB>, input: I, values: A) => Compilable<R>,
): { execute(db: Kysely<DB>, input: I): Promise<R[]> } {
  const byShape = new Map<string, PreparedQuery<A, R>>();
  return {
    execute(db, input) {
      const values = valuesOf(input);
      const shape = shapeOf(input);
      let query = byShape.get(shape);
      if (!query) {
        const names = (Object.keys(values) as (keyof A & string)[]).filter((name) => values[name] !== undefined);
        query = preparedQuery(names, (db, placeholders) => build(db, input, placeholders));
        byShape.set(shape, query);
      }
      return query.execute(db, values);
    },
  };
}

/**
 * Every column of a row type, as a prepared query selects it instead of `*`: the object must have
 * exactly the row's keys, so the list cannot miss a column the type has.
 */
export function columnsOf<Row>(keys: { [K in keyof Row]-?: true }): (keyof Row & string)[] {
  return Object.keys(keys) as (keyof Row & string)[];
}
