/**
 * All SQL of the users domain. Every function takes the database or a transaction first.
 */
import { sql, type Kysely, type Transaction } from 'kysely';

import { countAndPage } from '../../db/paging.js';
import { columnsOf, preparedQuery } from '../../db/prepared.js';
import type { DB, TariffStatus, UserRow } from '../../db/schema.js';
import { notBannedFrom } from '../rooms/room-bans.repository.js';
import type { PageRequest } from '../paging.js';
import type { User, UserPatch } from './user.js';

type Db = Kysely<DB> | Transaction<DB>;

export function rowToUser(row: UserRow): User {
  return {
    id: row.id,
    oidc_issuer: row.oidc_issuer,
    oidc_sub: row.oidc_sub,
    email: row.email,
    title: row.title,
    firstname: row.firstname,
    lastname: row.lastname,
    display_name: row.display_name,
    avatar_url: row.avatar_url,
    language: row.language,
    dashboard_theme: row.dashboard_theme,
    conference_theme: row.conference_theme,
    tariff_name: row.tariff_name,
    tariff_status: row.tariff_status,
    id_token_exp: row.id_token_exp,
  };
}

/** Every column of `users`, named: prepared queries cannot select `*` (prepared.ts). */
const USER_COLUMNS = columnsOf<UserRow>({
  id: true,
  oidc_issuer: true,
  oidc_sub: true,
  email: true,
  title: true,
  firstname: true,
  lastname: true,
  display_name: true,
  avatar_url: true,
  language: true,
  dashboard_theme: true,
  conference_theme: true,
  tariff_name: true,
  tariff_status: true,
  id_token_exp: true,
  created_at: true,
  updated_at: true,
  disabled_at: true,
});

/** The user behind an access token: looked up on every authenticated request whose user is not cached. */
const userBySubjectQuery = preparedQuery(['issuer', 'subject'], (db, { issuer, subject }: { issuer: string; subject: string }) =>
  db.selectFrom('users').select(USER_COLUMNS).where('oidc_issuer', '=', issuer).where('oidc_sub', '=', subject),
);

export async function findUserByOidcSubject(db: Db, issuer: string, subject: string): Promise<UserRow | undefined> {
  return userBySubjectQuery.takeFirst(db, { issuer, subject });
}

export async function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Every user, oldest first (for the operator's `convene users list`). */
export async function listAllUsers(db: Db): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('created_at').orderBy('id').execute();
}

/** Disables the user (their logins and access tokens are refused) or enables them again. */
export async function setUserDisabled(db: Db, id: string, disabled: boolean): Promise<void> {
  await db
    .updateTable('users')
    .set({ disabled_at: disabled ? sql<Date>`coalesce(disabled_at, now())` : null, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .execute();
}

/** Assigns a tariff by name (null: the default tariff). */
export async function setUserTariff(db: Db, id: string, tariffName: string | null): Promise<void> {
  await db
    .updateTable('users')
    .set({ tariff_name: tariffName, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .execute();
}

/** What a login writes: the user's row as the ID token has it, their groups, and which fields it refreshes. */
export interface LoginRecord {
  user: {
    oidc_issuer: string;
    oidc_sub: string;
    email: string;
    firstname: string;
    lastname: string;
    display_name: string;
    avatar_url: string;
    language: string;
    tariff_name: string | null;
    tariff_status: TariffStatus;
    id_token_exp: Date | null;
  };
  /** The user's groups now (the `x_grp` claim): the others are dropped. */
  groups: readonly string[];
  /** Overwrite a display name the user chose (`disallow_custom_display_name`). */
  refreshDisplayName: boolean;
  /** Overwrite the tariff (the token carries one, or `[tariffs] claim` is set). */
  refreshTariff: boolean;
}

type LoginArgs = LoginRecord['user'] & Omit<LoginRecord, 'user'> & { lowerCaseEmail: string };

/** The user's columns a login writes. */
const USER_FIELDS = columnsOf<LoginRecord['user']>({
  oidc_issuer: true,
  oidc_sub: true,
  email: true,
  firstname: true,
  lastname: true,
  display_name: true,
  avatar_url: true,
  language: true,
  tariff_name: true,
  tariff_status: true,
  id_token_exp: true,
});

/**
 * A login's writes, in one statement (a transaction of five or six round trips cost more than the
 * rest of a login):
 * - `account` inserts the user, or on a known (issuer, subject) refreshes what the IdP owns; so two
 *   first logins racing each other cannot both insert. Title, language and themes belong to the user
 *   and are never overwritten. A disabled user's row is left as it is and not returned, which leaves
 *   every later step without a user: nothing of a refused login is written.
 * - `dropped_groups` and `added_groups` make the token's groups the user's (the IdP owns them).
 * - `claimed` and `converted` turn the pending e-mail invitations of the address into invitations of
 *   the user, on every login (an address the IdP changed may have invites waiting too). The role is
 *   kept (an e-mail `guest` becomes a `user`: registered invitees have no guest role), and so is the
 *   inviter. A direct invitation the user already has stands, with its role.
 */
const loginStatement = preparedQuery<LoginArgs, UserRow & { created: boolean }>(
  [...USER_FIELDS, 'groups', 'refreshDisplayName', 'refreshTariff', 'lowerCaseEmail'],
  (db, args) =>
    db
      .with('account', (db) =>
        db
          .insertInto('users')
          .values(Object.fromEntries(USER_FIELDS.map((field) => [field, args[field]])) as LoginRecord['user'])
          .onConflict((conflict) =>
            conflict
              .columns(['oidc_issuer', 'oidc_sub'])
              .doUpdateSet((eb) => ({
                email: eb.ref('excluded.email'),
                firstname: eb.ref('excluded.firstname'),
                lastname: eb.ref('excluded.lastname'),
                avatar_url: eb.ref('excluded.avatar_url'),
                tariff_name: sql<string | null>`case when ${args.refreshTariff}::boolean then excluded.tariff_name else users.tariff_name end`,
                tariff_status: eb.ref('excluded.tariff_status'),
                id_token_exp: eb.ref('excluded.id_token_exp'),
                display_name: sql<string>`case when ${args.refreshDisplayName}::boolean then excluded.display_name else users.display_name end`,
                updated_at: sql<Date>`now()`,
              }))
              .where('users.disabled_at', 'is', null),
          )
          // A row the statement inserted has no locking transaction yet (xmax 0); an updated one has ours.
          .returning([...USER_COLUMNS, sql<boolean>`xmax = 0`.as('created')]),
      )
      .with('dropped_groups', (db) =>
        db
          .deleteFrom('user_groups')
          .where('user_id', 'in', db.selectFrom('account').select('account.id'))
          .where(sql<boolean>`name <> all(${args.groups}::text[])`),
      )
      .with('added_groups', (db) =>
        db
          .insertInto('user_groups')
          .columns(['user_id', 'name'])
          .expression(
            db
              .selectFrom('account')
              .select(['account.id', sql<string>`unnest(${args.groups}::text[])`.as('name')])
              .distinct(),
          )
          .onConflict((conflict) => conflict.columns(['user_id', 'name']).doNothing()),
      )
      .with('claimed', (db) =>
        db
          .deleteFrom('event_email_invites')
          .where('email', '=', args.lowerCaseEmail)
          .where((eb) => eb.exists(eb.selectFrom('account').select('account.id')))
          .returning(['event_id', 'role', 'created_by', 'created_at']),
      )
      .with('converted', (db) =>
        db
          .insertInto('event_invites')
          .columns(['event_id', 'invitee', 'role', 'status', 'created_by', 'created_at'])
          .expression((eb) =>
            eb.selectFrom(['claimed', 'account']).select((inner) => [
              'claimed.event_id',
              'account.id',
              inner
                .case()
                .when('claimed.role', '=', 'moderator')
                .then(sql<'moderator'>`'moderator'`)
                .else(sql<'user'>`'user'`)
                .end()
                .as('role'),
              sql<'pending'>`'pending'`.as('status'),
              'claimed.created_by',
              'claimed.created_at',
            ]),
          )
          .onConflict((conflict) => conflict.columns(['event_id', 'invitee']).doNothing()),
      )
      .selectFrom('account')
      .select([...USER_COLUMNS, 'created']),
);

/** Records a login (`loginStatement`); undefined when the user is disabled, and then nothing was written. */
export async function recordLogin(db: Db, login: LoginRecord): Promise<{ row: UserRow; created: boolean } | undefined> {
  const { groups, refreshDisplayName, refreshTariff } = login;
  const written = await loginStatement.takeFirst(db, {
    ...login.user,
    groups,
    refreshDisplayName,
    refreshTariff,
    lowerCaseEmail: login.user.email.toLowerCase(),
  });
  if (!written) return undefined;
  const { created, ...row } = written;
  return { row, created };
}

const PATCHABLE = ['title', 'display_name', 'language', 'dashboard_theme', 'conference_theme'] as const;

/** Sets the given profile fields; only these five, whatever else a request body carried. */
export async function updateUser(db: Db, id: string, patch: UserPatch): Promise<UserRow | undefined> {
  const changes: UserPatch = {};
  for (const field of PATCHABLE) {
    const value = patch[field];
    if (value !== undefined) changes[field] = value;
  }
  if (Object.keys(changes).length === 0) return findUserById(db, id);
  return db
    .updateTable('users')
    .set({ ...changes, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/**
 * The users who share a room or an event with the caller: the caller; the creators of the events
 * the caller created or is invited to (and not banned from their rooms) and of those events' rooms;
 * and those events' invitees.
 */
function visibleUserIds(db: Db, callerId: string) {
  return db
    .with('my_events', (qb) =>
      qb
        .selectFrom('events')
        .select(['events.id', 'events.created_by', 'events.room_id'])
        .where('events.created_by', '=', callerId)
        .union(
          qb
            .selectFrom('events')
            .innerJoin('event_invites', 'event_invites.event_id', 'events.id')
            .select(['events.id', 'events.created_by', 'events.room_id'])
            .where('event_invites.invitee', '=', callerId)
            .where(notBannedFrom(sql.ref('events.room_id'), callerId)),
        ),
    )
    .with('visible', (qb) =>
      qb
        .selectNoFrom(sql<string>`${callerId}::uuid`.as('user_id'))
        .union(qb.selectFrom('my_events').select('my_events.created_by as user_id'))
        .union(qb.selectFrom('rooms').innerJoin('my_events', 'my_events.room_id', 'rooms.id').select('rooms.created_by as user_id'))
        .union(qb.selectFrom('event_invites').innerJoin('my_events', 'my_events.id', 'event_invites.event_id').select('event_invites.invitee as user_id')),
    );
}

export async function listVisibleUsers(db: Db, callerId: string, request: PageRequest): Promise<{ total: number; rows: UserRow[] }> {
  const visible = visibleUserIds(db, callerId).selectFrom('visible').innerJoin('users', 'users.id', 'visible.user_id');
  return countAndPage(visible, visible.selectAll('users').orderBy('users.display_name').orderBy('users.id'), request);
}

/** `%` and `_` in a user's query are meant literally; `\` is LIKE's default escape character. */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (char) => `\\${char}`);

/**
 * Find-users' matches (issue 22): among the users who share a room or an event with the caller
 * (`visibleUserIds`), a case-insensitive substring of display name, "firstname lastname" or e-mail
 * address; anyone else only when the query is their whole address, case-insensitively. So a caller
 * cannot list addresses with short queries, and learns of a stranger only what they typed.
 */
export async function searchUsers(db: Db, callerId: string, query: string, limit: number): Promise<UserRow[]> {
  const pattern = `%${escapeLike(query)}%`;
  return visibleUserIds(db, callerId)
    .selectFrom('users')
    .selectAll('users')
    .where((eb) =>
      eb.or([
        eb.and([
          eb('users.id', 'in', eb.selectFrom('visible').select('visible.user_id')),
          eb.or([
            eb('users.display_name', 'ilike', pattern),
            eb(sql<string>`users.firstname || ' ' || users.lastname`, 'ilike', pattern),
            eb('users.email', 'ilike', pattern),
          ]),
        ]),
        eb(sql<string>`lower(users.email)`, '=', sql<string>`lower(${query})`),
      ]),
    )
    .orderBy('users.display_name')
    .orderBy('users.id')
    .limit(limit)
    .execute();
}

/** The registered users with these addresses (compared case-insensitively). */
export async function findUsersByEmail(db: Db, emails: string[]): Promise<UserRow[]> {
  if (emails.length === 0) return [];
  const lowered = [...new Set(emails.map((email) => email.toLowerCase()))];
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, 'in', lowered)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The id and address of a user (whom an event invite is sent to); undefined when there is none. */
export async function findContactById(db: Db, id: string): Promise<{ id: string; email: string } | undefined> {
  return db.selectFrom('users').select(['id', 'email']).where('id', '=', id).executeTakeFirst();
}

/** Registered users whose address is `email` (lower-case); addresses are compared case-insensitively. */
export async function findContactsByEmail(db: Db, email: string): Promise<{ id: string; email: string }[]> {
  return db
    .selectFrom('users')
    .select(['id', 'email'])
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email))
    .orderBy('created_at')
    .execute();
}

/** Bytes of all assets in the rooms the user created (the tariff's `max_storage` counts these). */
const usedStorageQuery = preparedQuery(['userId'], (db, { userId }: { userId: string }) =>
  db
    .selectFrom('assets')
    .innerJoin('rooms', 'rooms.id', 'assets.room_id')
    .where('rooms.created_by', '=', userId)
    .select(sql<number | string>`coalesce(sum(assets.size), 0)::bigint`.as('used')),
);

export async function usedStorageOf(db: Db, userId: string): Promise<number> {
  const row = await usedStorageQuery.takeFirst(db, { userId });
  return Number(row?.used ?? 0);
}
