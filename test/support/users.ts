/**
 * Fixtures of the user service's integration tests (test/integration/users): a database of the
 * test file's own, a user service over it, identity claims of fresh subjects, and the AppError a
 * promise rejects with.
 */
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import type { Kysely } from 'kysely';

import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import type { DB } from '../../src/db/schema.js';
import { DomainError } from '../../src/errors.js';
import { httpError, type HttpError } from '../../src/http/errors.js';
import type { IdentityClaims } from '../../src/domain/identity/identity.js';
import { createTariffCatalog } from '../../src/domain/tariffs/tariff-catalog.js';
import { createUserService, type User, type UserService, type UserServiceDeps } from '../../src/domain/users/users.service.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export const ISSUER = 'https://idp.test/realms/main';
export const HOUR = 3_600_000;

/**
 * Registers the hooks that give the test file a migrated database (created before all tests,
 * emptied before each, closed after all) and answers a getter for its Kysely instance, valid from
 * the file's first `beforeAll` on.
 */
export function useUsersTestDatabase(): () => Kysely<DB> {
  let testDb: TestDatabase | undefined;
  beforeAll(async () => {
    testDb = await createTestDatabase();
  });
  afterAll(async () => testDb?.close());
  beforeEach(async () => testDb?.reset());
  return () => {
    if (!testDb) throw new Error('the users test database is not open: use it in a hook or test');
    return testDb.database.db;
  };
}

/** What `loadConfig` deep-merges over the defaults: any part of any section. */
type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

export interface UserServiceOverrides {
  endpoints?: Partial<Config['endpoints']>;
  users?: Partial<Config['users']>;
  tariffs?: DeepPartial<Config['tariffs']>;
  /** Further dependencies of the service (directory, authCache). */
  deps?: Partial<Omit<UserServiceDeps, 'db' | 'config' | 'tariffs'>>;
}

/** A user service over `db`, configured by defaults, no file and no environment, plus the overrides. */
export function userServiceFor(db: Kysely<DB>, { deps = {}, endpoints = {}, ...sections }: UserServiceOverrides = {}): UserService {
  const config = loadConfig({ file: false, env: {}, overrides: { endpoints, ...sections } });
  return createUserService({ db, config, tariffs: createTariffCatalog(config.tariffs), ...deps });
}

let seq = 0;

/**
 * The claims of a new subject: `subject-<n>`, `user<n>@example.org`, Ada Lovelace, valid for an
 * hour (in whole seconds), `n` counting up per test file. The overrides, or a function of `n`
 * answering them, replace any of these.
 */
export function claimsFor(overrides: Partial<IdentityClaims> | ((n: number) => Partial<IdentityClaims>) = {}): IdentityClaims {
  seq += 1;
  return {
    issuer: ISSUER,
    subject: `subject-${seq}`,
    email: `user${seq}@example.org`,
    firstname: 'Ada',
    lastname: 'Lovelace',
    expires_at: new Date(Math.floor(Date.now() / 1000) * 1000 + HOUR),
    ...(typeof overrides === 'function' ? overrides(seq) : overrides),
  };
}

/** Logs a new subject in (see `claimsFor`) and answers the user. */
export async function registerUser(users: UserService, overrides: Partial<IdentityClaims> | ((n: number) => Partial<IdentityClaims>) = {}): Promise<User> {
  const { user } = await users.login(claimsFor(overrides));
  return user;
}

/** The DomainError the promise rejects with, as HTTP answers it; fails the test when it resolves or rejects otherwise. */
export async function rejection(promise: Promise<unknown>): Promise<HttpError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(DomainError);
  return httpError(error as DomainError);
}

/**
 * An event of `host`, in a room of theirs, with `guests` invited: from then on they share an event
 * (what find-users and the user list go by). Written straight into the database.
 */
export async function shareAnEvent(db: Kysely<DB>, host: Pick<User, 'id'>, guests: Pick<User, 'id'>[]): Promise<string> {
  const room = await db.insertInto('rooms').values({ created_by: host.id }).returning('id').executeTakeFirstOrThrow();
  const event = await db
    .insertInto('events')
    .values({ room_id: room.id, created_by: host.id, updated_by: host.id, title: 'Meeting', is_time_independent: true })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (guests.length > 0) {
    await db
      .insertInto('event_invites')
      .values(guests.map((guest) => ({ event_id: event.id, invitee: guest.id, created_by: host.id })))
      .execute();
  }
  return event.id;
}
