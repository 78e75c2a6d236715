import type { JWTPayload } from 'jose';

import { TokenRejected } from './token-verification.js';
import { codePointLength } from '../code-points.js';

/** What an ID token says about its user (docs/architecture.md §5), under our field names. */
export interface IdentityClaims {
  issuer: string;
  subject: string;
  email: string;
  firstname: string;
  lastname: string;
  /** `nickname`, else `name`. */
  display_name?: string;
  /** `picture`. */
  avatar_url?: string;
  /** The claim named by `[tariffs] claim`. */
  tariff?: string;
  tariff_status?: string;
  /** `x_grp`: the user's group names (see `groupsFrom`); absent: none. */
  groups?: string[];
  expires_at: Date;
}

/** Whether PostgreSQL's text can hold the string: it has no NUL (a login storing one would fail). */
const storable = (value: string) => !value.includes('\0');

/** A claim's text; none when it is empty, blank, or could not be stored. */
const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' && storable(value) ? value : undefined);

/**
 * Maps verified ID-token claims. `sub` and `email` are required; missing names become '' rather than
 * a failed login, because many IdP accounts (service users, social logins) carry only some of them.
 */
export function identityClaimsFrom(payload: JWTPayload & { sub: string; exp: number }, tariffClaim?: string): IdentityClaims {
  if (!storable(payload.sub)) throw new TokenRejected('the "sub" claim holds NUL');
  const email = text(payload.email);
  if (!email) throw new TokenRejected('the token lacks the "email" claim');
  const claims: IdentityClaims = {
    issuer: String(payload.iss),
    subject: payload.sub,
    email,
    firstname: text(payload.given_name) ?? '',
    lastname: text(payload.family_name) ?? '',
    groups: groupsFrom(payload.x_grp),
    expires_at: new Date(payload.exp * 1000),
  };
  const displayName = text(payload.nickname) ?? text(payload.name);
  if (displayName) claims.display_name = displayName;
  const avatar = text(payload.picture);
  if (avatar) claims.avatar_url = avatar;
  const tariff = tariffClaim ? text(valueAtPath(payload, tariffClaim)) : undefined;
  if (tariff) claims.tariff = tariff;
  const tariffStatus = text(payload.tariff_status);
  if (tariffStatus) claims.tariff_status = tariffStatus;
  return claims;
}

/** Longest group name kept (the database's limit); a longer one is left out, as is anything that is no name. */
export const MAX_GROUP_NAME = 255;
/**
 * Most groups kept per user: the first ones of the claim. Each is a row at login, a history read
 * and an entry of the chat's `join_success`, so a claim of thousands must not reach them.
 */
export const MAX_GROUPS = 100;

/** A name PostgreSQL's text can hold as it is: no NUL, no lone surrogate (the driver would change it). */
const isGroupName = (name: unknown): name is string =>
  typeof name === 'string' && name !== '' && storable(name) && name.isWellFormed() && codePointLength(name) <= MAX_GROUP_NAME;

/**
 * The `x_grp` claim (the reference controller and its web app: an array of group names, e.g. Keycloak group paths):
 * its first `MAX_GROUPS` distinct group names (non-empty strings of at most `MAX_GROUP_NAME`
 * characters). A missing claim means no groups, so a login after the IdP dropped a user from every
 * group drops them here too.
 */
export function groupsFrom(claim: unknown): string[] {
  if (!Array.isArray(claim)) return [];
  const names = new Set<string>();
  for (const name of claim) {
    if (names.size === MAX_GROUPS) break;
    if (isGroupName(name)) names.add(name);
  }
  return [...names];
}

/** Reads a dot path such as `realm_access.roles`; a claim whose name itself has dots is tried whole first. */
export function valueAtPath(payload: Record<string, unknown>, path: string): unknown {
  if (Object.hasOwn(payload, path)) return payload[path];
  let current: unknown = payload;
  for (const segment of path.split('.')) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/** The roles at the configured claim path: an array of strings (other entries ignored), else none. */
export function rolesAt(payload: Record<string, unknown>, path: string): string[] {
  const value = valueAtPath(payload, path);
  return Array.isArray(value) ? value.filter((role): role is string => typeof role === 'string') : [];
}
