/**
 * Verifies the tokens of the configured OpenID Connect issuer (docs/architecture.md §5): ID tokens at login,
 * access tokens on every protected request, and service-account tokens for gateways. Without an
 * issuer, the embedded development provider takes its place (never in production).
 */
import { createLocalJWKSet } from 'jose';
import type { JWTVerifyGetKey } from 'jose';

import { errors } from '../../errors.js';
import { identityClaimsFrom, rolesAt } from './claims.js';
import type { IdentityClaims } from './claims.js';
import { devProviderFromConfig } from './dev-provider.js';
import type { DevIdentityProvider } from './dev-provider.js';
import { remoteIssuerKeys } from './discovery.js';
import { identityMode } from './identity-config.js';
import type { IdentityConfig } from './identity-config.js';
import { ExpiringLru } from '../expiring-lru.js';
import { tokenCacheKey } from './token-cache.js';
import { checkAccessToken, checkIdTokenKind, recipientsOf } from './token-kinds.js';
import { ProviderUnavailable, TokenRejected, verifyJwt } from './token-verification.js';
import type { VerifiedJwt } from './token-verification.js';

export type { IdentityClaims } from './claims.js';
export type { IdentityConfig } from './identity-config.js';
export { IdentityConfigurationError, identityMode } from './identity-config.js';

export interface AccessGrant {
  issuer: string;
  subject: string;
  expires_at: Date;
}

export interface Identity {
  /** The answer of `GET /v1/auth/login`: `{oidc: {name, url}}`. */
  providerInfo(): { name: string; url: string };
  /** Failure: 400 `invalid_id_token`, the message saying why; 503 when the IdP cannot be reached. */
  verifyIdToken(token: string): Promise<IdentityClaims>;
  /** Failure: 401 `unauthorized` with WWW-Authenticate; 503 when the IdP cannot be reached. */
  verifyAccessToken(token: string): Promise<AccessGrant>;
  /** An access token whose roles (at `[oidc] service_roles_claim`) include `role`; otherwise 401. */
  verifyServiceToken(token: string, role: string): Promise<{ subject: string; roles: string[] }>;
  close(): Promise<void>;
}

export interface IdentityOptions {
  devProvider?: DevIdentityProvider;
  fetch?: typeof fetch;
  /** Clock for expiry checks and the token cache (tests move it forward). */
  now?: () => number;
  /** Verified access tokens remembered at most (LRU). */
  tokenCacheSize?: number;
  /** Passed to the remote key source; see `RemoteKeysOptions`. */
  discoveryRetryAfterMs?: number;
  jwksCacheMaxAgeMs?: number;
}

interface VerifiedAccess {
  grant: AccessGrant;
  roles: string[];
}

export async function createIdentity(config: IdentityConfig, options: IdentityOptions = {}): Promise<Identity> {
  const now = options.now ?? Date.now;
  const { issuer, keys } = await keySource(config, options, now);
  const cache = new ExpiringLru<VerifiedAccess>(options.tokenCacheSize ?? 10_000, now);
  const recipients = recipientsOf(config.oidc);

  const verify = async (token: string, audience?: string): Promise<VerifiedJwt> =>
    verifyJwt(token, await keys(), { issuer, now, ...(audience === undefined ? {} : { audience }) });

  const verifyAccess = async (token: string): Promise<VerifiedAccess> => {
    const key = tokenCacheKey(token);
    const known = cache.get(key);
    if (known) return known;
    try {
      const { header, payload } = await verify(token);
      checkAccessToken(header, payload, recipients);
      const verified: VerifiedAccess = {
        grant: { issuer, subject: payload.sub, expires_at: new Date(payload.exp * 1000) },
        roles: rolesAt(payload, config.oidc.service_roles_claim),
      };
      cache.set(key, verified, payload.exp * 1000);
      return verified;
    } catch (error) {
      if (error instanceof TokenRejected) {
        throw errors.unauthorized(
          `The access token is invalid: ${error.reason}`,
          error.expired ? 'The provided access token expired' : 'The provided access token is invalid',
        );
      }
      throw unavailableOr(error);
    }
  };

  return {
    providerInfo: () => ({ name: config.oidc.provider_name, url: issuer }),

    async verifyIdToken(token) {
      try {
        const { header, payload } = await verify(token, config.oidc.client_id);
        checkIdTokenKind(header, payload);
        // OIDC Core 3.1.3.7: with several audiences, the authorized party must be us.
        if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== config.oidc.client_id) {
          throw new TokenRejected('the token was issued to another client (azp)');
        }
        return identityClaimsFrom(payload, config.tariffs.claim);
      } catch (error) {
        if (error instanceof TokenRejected) throw errors.invalidIdToken(`The provided id token is invalid: ${error.reason}`);
        throw unavailableOr(error);
      }
    },

    async verifyAccessToken(token) {
      return (await verifyAccess(token)).grant;
    },

    async verifyServiceToken(token, role) {
      const { grant, roles } = await verifyAccess(token);
      if (!roles.includes(role)) {
        throw errors.unauthorized(`The service token lacks the role "${role}"`, 'The provided access token lacks a required role');
      }
      return { subject: grant.subject, roles };
    },

    async close() {
      cache.clear();
    },
  };
}

/** The configured issuer, else the development provider; anything else cannot start. */
async function keySource(
  config: IdentityConfig,
  options: IdentityOptions,
  now: () => number,
): Promise<{ issuer: string; keys: () => Promise<JWTVerifyGetKey> }> {
  if (identityMode(config) === 'issuer') {
    const issuer = config.oidc.issuer!;
    const keys = remoteIssuerKeys(issuer, {
      now,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.discoveryRetryAfterMs === undefined ? {} : { retryAfterMs: options.discoveryRetryAfterMs }),
      ...(options.jwksCacheMaxAgeMs === undefined ? {} : { jwksCacheMaxAgeMs: options.jwksCacheMaxAgeMs }),
    });
    return { issuer, keys };
  }
  const provider = options.devProvider ?? (await devProviderFromConfig(config));
  const local = createLocalJWKSet(provider.jwks());
  return { issuer: provider.issuer, keys: async () => local };
}

function unavailableOr(error: unknown): unknown {
  return error instanceof ProviderUnavailable ? errors.identityProviderUnavailable(error) : error;
}
