/**
 * Registered users: login (create or update from verified ID-token claims), authentication of
 * access-token holders, the profile operations of the contract and find-users (the `[endpoints]` switches).
 * Rows stay below this file; callers get `User` and the contract's profile shapes.
 */
import type { Config } from '../../config/schema.js';
import type { Db } from '../../db/schema.js';
import { errors } from '../../errors.js';
import type { AccessGrant, IdentityClaims } from '../identity/identity.js';
import type { KeycloakDirectory } from '../identity/keycloak-directory.js';
import type { Tariff, TariffCatalog } from '../tariffs/tariff-catalog.js';
import { ExpiringLru } from '../expiring-lru.js';
import { libravatarUrl } from './avatar.js';
import { isTariffStatus, toPublicProfile, type CurrentUser, type FoundUser, type PublicUserProfile, type User, type UserPatch } from './user.js';
import type { Page, PageRequest } from '../paging.js';
import * as repository from './users.repository.js';
import { isUuid } from '../uuid.js';
import { codePointLength, cutToCodePoints } from '../code-points.js';

export type { CurrentUser, FoundUser, PublicUserProfile, User, UserPatch } from './user.js';

export interface UserService {
  /** Creates the user on their first login, else refreshes what the IdP owns; converts pending e-mail invites. */
  login(claims: IdentityClaims): Promise<{ user: User; created: boolean }>;
  /** The registered user behind a verified access token; 401 `unknown_user` if they never logged in. */
  authenticate(grant: AccessGrant): Promise<User>;
  toCurrentUser(user: User): Promise<CurrentUser>;
  toPublicProfile(user: User): PublicUserProfile;
  /** The user's tariff (the default one when theirs is unset or no longer configured). */
  tariffOf(user: User): Tariff;
  patchMe(user: User, patch: UserPatch): Promise<CurrentUser>;
  /** Any registered user's public profile (docs/decisions.md); 404 when there is none. */
  getUser(caller: Pick<User, 'id'>, id: string): Promise<PublicUserProfile>;
  /** The caller and everyone who shares a room or an event with them, by display name. */
  listVisibleUsers(caller: Pick<User, 'id'>, page: PageRequest): Promise<Page<PublicUserProfile>>;
  /**
   * Users the caller shares a room or an event with, by any part of their names or addresses;
   * anyone else only by their whole address (and with `users_find_use_kc`, the directory's people).
   */
  findUsers(caller: Pick<User, 'id'>, q: string): Promise<FoundUser[]>;
}

export interface UserServiceDeps {
  db: Db;
  /** With `[tariffs] claim`, every login sets the user's tariff from the claim; without, it is the operator's (`convene tariffs assign`). */
  config: Pick<Config, 'users' | 'endpoints'> & { tariffs?: Pick<Config['tariffs'], 'claim'> };
  tariffs: TariffCatalog;
  /** The IdP's user directory; required when `[endpoints] users_find_use_kc` is on. */
  directory?: KeycloakDirectory;
  /** The authenticated-user cache: `ttl_ms` 0 turns it off. Defaults: 2 s, 10,000 users. */
  authCache?: { ttl_ms?: number; max_entries?: number; now?: () => number };
}

const MIN_QUERY_LENGTH = 3;
// Issuer URLs never contain a newline, so this separator cannot make two (issuer, subject) pairs collide.
const cacheKey = (issuer: string, subject: string) => `${issuer}\n${subject}`;
const MAX_DISPLAY_NAME = 255; // the contract's limit; IdP nicknames can be longer

export function createUserService({ db, config, tariffs, directory, authCache = {} }: UserServiceDeps): UserService {
  const { users: settings, endpoints } = config;
  if (endpoints.users_find_use_kc && !directory) {
    throw new Error('[endpoints] users_find_use_kc is on, but no identity-provider directory was given');
  }
  // The users of recent requests, for a few seconds: writes through this instance drop the entry at
  // once; writes through another instance (or a deletion) are seen after at most the ttl.
  const now = authCache.now ?? Date.now;
  const ttlMs = authCache.ttl_ms ?? 2_000;
  const cache = new ExpiringLru<User>(authCache.max_entries ?? 10_000, now);
  const avatarOf = (email: string) => libravatarUrl(settings.avatar_base_url, email);

  const toCurrentUser = async (user: User): Promise<CurrentUser> => ({
    ...toPublicProfile(user),
    dashboard_theme: user.dashboard_theme,
    conference_theme: user.conference_theme,
    language: user.language,
    tariff_status: user.tariff_status,
    used_storage: await repository.usedStorageOf(db, user.id),
  });

  return {
    async login(claims) {
      const displayName = displayNameFrom(claims);
      const login = await repository.recordLogin(db, {
        user: {
          oidc_issuer: claims.issuer,
          oidc_sub: claims.subject,
          email: claims.email,
          firstname: claims.firstname,
          lastname: claims.lastname,
          display_name: displayName,
          avatar_url: claims.avatar_url ?? avatarOf(claims.email),
          language: settings.default_language,
          tariff_name: claims.tariff ?? null,
          tariff_status: isTariffStatus(claims.tariff_status) ? claims.tariff_status : 'default',
          id_token_exp: claims.expires_at,
        },
        groups: claims.groups ?? [],
        // With the switch on, the IdP's name is enforced; otherwise a name the user chose survives logins.
        refreshDisplayName: endpoints.disallow_custom_display_name,
        refreshTariff: claims.tariff !== undefined || config.tariffs?.claim !== undefined,
      });
      // nothing was written: a disabled user's profile is not refreshed either
      if (!login) throw errors.invalidIdToken('The user is disabled');
      const user = repository.rowToUser(login.row);
      cache.delete(cacheKey(user.oidc_issuer, user.oidc_sub));
      return { user, created: login.created };
    },

    async authenticate(grant) {
      const key = cacheKey(grant.issuer, grant.subject);
      const cached = cache.get(key);
      if (cached) return cached;
      // login refuses a subject with NUL (PostgreSQL text cannot hold it), so no user has one; asking
      // the database would fail instead of answering
      if (grant.subject.includes('\0') || grant.issuer.includes('\0')) throw errors.unknownUser();
      const row = await repository.findUserByOidcSubject(db, grant.issuer, grant.subject);
      if (!row) throw errors.unknownUser();
      if (row.disabled_at !== null) throw errors.unauthorized('The user is disabled', 'The user is disabled');
      const user = repository.rowToUser(row);
      if (ttlMs > 0) cache.set(key, user, now() + ttlMs);
      return user;
    },

    toCurrentUser,
    toPublicProfile,
    tariffOf: (user) => tariffs.forUser(user),

    async patchMe(user, patch) {
      const changes: UserPatch = { ...patch };
      if (patch.display_name !== undefined) {
        const displayName = patch.display_name.trim();
        if (displayName === '') {
          throw errors.validationFailed([{ field: 'display_name', code: 'invalid_length', message: 'must not be empty or only white space' }]);
        }
        if (endpoints.disallow_custom_display_name && displayName !== user.display_name) {
          throw errors.displayNameChangeForbidden();
        }
        changes.display_name = displayName;
      }
      const row = await repository.updateUser(db, user.id, changes);
      if (!row) throw errors.unknownUser(); // deleted since this request authenticated
      const updated = repository.rowToUser(row);
      cache.delete(cacheKey(updated.oidc_issuer, updated.oidc_sub));
      return toCurrentUser(updated);
    },

    async getUser(_caller, id) {
      const row = isUuid(id) ? await repository.findUserById(db, id) : undefined;
      if (!row) throw errors.notFound('No user with this id');
      return toPublicProfile(repository.rowToUser(row));
    },

    async listVisibleUsers(caller, page) {
      const { total, rows } = await repository.listVisibleUsers(db, caller.id, page);
      return { items: rows.map((row) => toPublicProfile(repository.rowToUser(row))), total };
    },

    async findUsers(caller, q) {
      if (endpoints.disable_users_find) throw errors.notFound('Finding users is disabled');
      const query = q.trim();
      if (codePointLength(query) < MIN_QUERY_LENGTH) {
        throw errors.queryTooShort(MIN_QUERY_LENGTH);
      }
      const limit = settings.find_limit;
      const rows = await repository.searchUsers(db, caller.id, query, limit);
      const found: FoundUser[] = rows.map(registeredResult);
      if (!endpoints.users_find_use_kc || !directory || found.length >= limit) return found;

      // The operator published the directory: its people are found by any part of their names or
      // addresses, those who have logged in as the registered users they are.
      const candidates = await directory.search(query, limit);
      const registered = new Map(
        (
          await repository.findUsersByEmail(
            db,
            candidates.map((c) => c.email),
          )
        ).map((row) => [row.email.toLowerCase(), row]),
      );
      const seen = new Set(rows.map((row) => row.email.toLowerCase()));
      for (const candidate of candidates) {
        const email = candidate.email.toLowerCase();
        if (seen.has(email)) continue;
        seen.add(email);
        const row = registered.get(email);
        found.push(
          row
            ? registeredResult(row)
            : {
                kind: 'unregistered',
                email: candidate.email,
                firstname: candidate.firstname,
                lastname: candidate.lastname,
                avatar_url: avatarOf(candidate.email),
              },
        );
      }
      return found.slice(0, limit);
    },
  };
}

const registeredResult = (row: Parameters<typeof repository.rowToUser>[0]): FoundUser => ({
  kind: 'registered',
  ...toPublicProfile(repository.rowToUser(row)),
});

/** The IdP's display name (`nickname`/`name`), else "firstname lastname", else the address. */
function displayNameFrom(claims: IdentityClaims): string {
  const name = claims.display_name?.trim() || `${claims.firstname} ${claims.lastname}`.trim() || claims.email;
  return cutToCodePoints(name, MAX_DISPLAY_NAME);
}
