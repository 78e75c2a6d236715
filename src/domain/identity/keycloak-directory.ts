/**
 * Searches the identity provider's user directory through the Keycloak admin API, for find-users
 * with `[endpoints] users_find_use_kc`. Convene authenticates as a confidential client with a
 * service account (client_credentials) that has the `view-users` role of `realm-management`.
 *
 * Failure policy: any failure (token, network, non-200, bad JSON) throws 503
 * `identity_directory_unavailable`. We do not quietly fall back to the local users, because a search
 * that silently misses every colleague who never logged in looks like "no such person" to the caller
 * and hides a broken secret or URL from the operator; a 503 is visible, logged and retryable.
 */
import { errors } from '../../errors.js';
import { IdentityConfigurationError } from './identity-config.js';
import type { IdentityConfig } from './identity-config.js';

export interface DirectoryUser {
  email: string;
  firstname: string;
  lastname: string;
}

export interface KeycloakDirectory {
  search(q: string, max: number): Promise<DirectoryUser[]>;
}

export interface KeycloakDirectoryOptions {
  /** e.g. `https://idp.example/admin/realms/main` */
  adminApiUrl: string;
  clientId: string;
  clientSecret: string;
  /** e.g. `https://idp.example/realms/main/protocol/openid-connect/token` */
  tokenEndpoint: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  now?: () => number;
}

/** Renew the service-account token this long before it expires, so a request never carries a dying one. */
const EXPIRY_MARGIN_MS = 10_000;

export function createKeycloakDirectory(options: KeycloakDirectoryOptions): KeycloakDirectory {
  const fetchImpl = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const now = options.now ?? Date.now;
  const adminApiUrl = options.adminApiUrl.replace(/\/+$/, '');
  let token: { value: string; expiresAtMs: number } | undefined;
  let pendingToken: Promise<string> | undefined;

  const requestToken = async (): Promise<string> => {
    const response = await fetchImpl(options.tokenEndpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: options.clientId, client_secret: options.clientSecret }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (response.status !== 200) throw new Error(`the token endpoint answered ${response.status}`);
    const body = (await response.json()) as { access_token?: unknown; expires_in?: unknown };
    if (typeof body.access_token !== 'string') throw new Error('the token endpoint answered without an access_token');
    const lifetimeMs = typeof body.expires_in === 'number' ? body.expires_in * 1000 : 60_000;
    token = { value: body.access_token, expiresAtMs: now() + lifetimeMs - EXPIRY_MARGIN_MS };
    return token.value;
  };

  const accessToken = async (): Promise<string> => {
    if (token && token.expiresAtMs > now()) return token.value;
    pendingToken ??= requestToken().finally(() => {
      pendingToken = undefined;
    });
    return pendingToken;
  };

  const searchOnce = async (q: string, max: number): Promise<Response> => {
    const url = new URL(`${adminApiUrl}/users`);
    url.search = new URLSearchParams({ search: q, max: String(max), briefRepresentation: 'true' }).toString();
    return fetchImpl(url, {
      headers: { authorization: `Bearer ${await accessToken()}`, accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
  };

  return {
    async search(q, max) {
      try {
        let response = await searchOnce(q, max);
        if (response.status === 401) {
          // The cached token was revoked or the IdP restarted: get a fresh one, once.
          token = undefined;
          response = await searchOnce(q, max);
        }
        if (response.status !== 200) throw new Error(`the admin API answered ${response.status}`);
        const users = await response.json();
        if (!Array.isArray(users)) throw new Error('the admin API did not answer a list of users');
        return users.flatMap(toDirectoryUser).slice(0, max);
      } catch (cause) {
        throw errors.identityDirectoryUnavailable(cause);
      }
    },
  };
}

/** The directory of `[oidc]` admin settings, or a configuration error naming what is missing. */
export function keycloakDirectoryFromConfig(config: Pick<IdentityConfig, 'oidc'>, fetchImpl?: typeof fetch): KeycloakDirectory {
  const { issuer, admin_api_url: adminApiUrl, admin_client_id: clientId, admin_client_secret: clientSecret, admin_token_url: tokenUrl } = config.oidc;
  if (!issuer || !adminApiUrl || !clientId || !clientSecret) {
    const missing = Object.entries({ issuer, admin_api_url: adminApiUrl, admin_client_id: clientId, admin_client_secret: clientSecret })
      .filter(([, value]) => !value)
      .map(([key]) => `[oidc] ${key}`);
    throw new IdentityConfigurationError(`[endpoints] users_find_use_kc needs ${missing.join(', ')}`);
  }
  return createKeycloakDirectory({
    adminApiUrl,
    clientId,
    clientSecret,
    // Keycloak's token endpoint sits at this path under the realm's issuer URL unless configured otherwise
    // (a separate service-account realm, or a proxy in front of the admin API).
    tokenEndpoint: tokenUrl ?? `${issuer.replace(/\/+$/, '')}/protocol/openid-connect/token`,
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
}

/** Keycloak user representation → our fields; entries without an email cannot be invited and are dropped. */
function toDirectoryUser(entry: unknown): DirectoryUser[] {
  if (typeof entry !== 'object' || entry === null) return [];
  const { email, firstName, lastName } = entry as Record<string, unknown>;
  if (typeof email !== 'string' || email === '') return [];
  return [{ email, firstname: typeof firstName === 'string' ? firstName : '', lastname: typeof lastName === 'string' ? lastName : '' }];
}
