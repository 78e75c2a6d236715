/**
 * Who is calling: resolved once per request from the operation's `security` in the contract and the
 * `Authorization` header. Bearer access tokens are verified by the identity layer (signature,
 * issuer, expiry, that it is an access token meant for Convene: token-kinds.ts; cached per token)
 * and mapped to a registered user; a token of a subject that never logged in is 401 `unknown_user`
 * (docs/architecture.md §5). Gateways' service tokens pass the same checks before their roles are read.
 *
 * Where the operation admits `InviteCode`, `Authorization: InviteCode <code>` makes the caller a
 * guest of the code's room while the code is active and unexpired (docs/decisions.md, "Guests"); a wrong
 * code counts against the caller's address as one given to verify_invite_code does. Existing
 * clients send the code as `Bearer <code>` to `GET /turn`, so there a Bearer value that is not shaped
 * like a JWT is taken for an invite code — without asking the identity provider about it first.
 */
import type { Identity } from '../domain/identity/identity.js';
import type { User, UserService } from '../domain/users/users.service.js';
import { DomainError, errors } from '../errors.js';
import { HTTP_STATUS } from './error-status.js';

export type Caller =
  | { kind: 'anonymous' }
  | { kind: 'user'; user: User }
  | { kind: 'service'; subject: string; roles: string[] }
  /** A guest holding an active, unexpired invite code of one room (`Authorization: InviteCode <code>`). */
  | { kind: 'guest'; inviteCode: string; roomId: string };

export type SecurityRequirement = Record<string, string[]>;

export interface AuthDeps {
  identity: Identity;
  users: UserService;
  callInRole: string;
  /**
   * The room an invite code admits to, when the code is active and unexpired now. Brute-force
   * limited: failures count against `source` (the client's address), 429 when over the limit.
   */
  invites: { admitGuest(code: string, source: string): Promise<{ code: string; roomId: string } | undefined> };
}

/** Three base64url segments (a JWS compact serialisation); an invite code (a UUID) never has dots. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** The schemes of an operation's `security`, once per operation (its requirements are fixed at start). */
const schemesOfSecurity = new WeakMap<SecurityRequirement[], ReadonlySet<string>>();

function schemesOf(security: SecurityRequirement[] | undefined): ReadonlySet<string> {
  if (!security) return new Set();
  let schemes = schemesOfSecurity.get(security);
  if (!schemes) schemesOfSecurity.set(security, (schemes = new Set(security.flatMap((req) => Object.keys(req)))));
  return schemes;
}

/** `source`: the client's address, against which failed invite codes count; read only for an invite code. */
export async function resolveCaller(
  security: SecurityRequirement[] | undefined,
  authorization: string | undefined,
  deps: AuthDeps,
  source: string | (() => string) = 'unknown',
): Promise<Caller> {
  const schemes = schemesOf(security);
  if (schemes.size === 0) return { kind: 'anonymous' };
  if (!authorization) throw errors.missingAuthorization();

  const space = authorization.indexOf(' ');
  const scheme = (space < 0 ? authorization : authorization.slice(0, space)).toLowerCase();
  const credentials = space < 0 ? '' : authorization.slice(space + 1).trim();
  if (!credentials) throw errors.unauthorized('Unable to parse access token or invite code');

  if (scheme === 'invitecode' && schemes.has('InviteCode')) return guest(credentials, source, deps);
  if (scheme === 'bearer' && schemes.has('InviteCode') && !JWT_SHAPE.test(credentials)) return guest(credentials, source, deps);
  if (scheme === 'bearer' && schemes.has('ServiceToken')) {
    const service = await deps.identity.verifyServiceToken(credentials, deps.callInRole);
    return { kind: 'service', subject: service.subject, roles: service.roles };
  }
  if (scheme === 'bearer' && schemes.has('BearerAuth')) {
    const grant = await deps.identity.verifyAccessToken(credentials);
    return { kind: 'user', user: await deps.users.authenticate(grant) };
  }
  throw errors.unauthorized('Unable to parse access token or invite code');
}

/** A malformed, unknown, inactive or expired code is 401 alike: a caller learns nothing about which. */
async function guest(code: string, source: string | (() => string), deps: AuthDeps): Promise<Caller> {
  const invite = await deps.invites.admitGuest(code, typeof source === 'string' ? source : source());
  if (!invite) throw errors.unauthorized('Authentication failed', 'The invite code is invalid, inactive or expired');
  return { kind: 'guest', inviteCode: invite.code, roomId: invite.roomId };
}

/** The user behind a request whose operation only admits users (BearerAuth). */
export function callerUser(caller: Caller): User {
  if (caller.kind !== 'user') throw errors.unauthorized();
  return caller.user;
}

/**
 * The registered user behind `Authorization: Bearer <access token>` sent to an operation that
 * admits anyone and does not need it (start_invited_room, verify_invite_code), so that a user
 * banned from a room is refused there too when it presents itself. Whatever else the header holds
 * (nothing, an invite code, an expired, foreign or forged token, a subject that never logged in)
 * names nobody: the caller is anonymous, as it would be without the header.
 */
export async function presentedUser(authorization: string | undefined, deps: Pick<AuthDeps, 'identity' | 'users'>): Promise<User | undefined> {
  const [scheme, credentials] = authorization?.trim().split(/\s+/) ?? [];
  if (scheme?.toLowerCase() !== 'bearer' || !credentials || !JWT_SHAPE.test(credentials)) return undefined;
  try {
    return await deps.users.authenticate(await deps.identity.verifyAccessToken(credentials));
  } catch (err) {
    // a token that opens nothing; a provider or database that is away is no answer about the token
    if (err instanceof DomainError && HTTP_STATUS[err.code] === 401) return undefined;
    throw err;
  }
}
