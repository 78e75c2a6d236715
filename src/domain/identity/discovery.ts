import { createRemoteJWKSet, customFetch } from 'jose';
import type { JWTVerifyGetKey } from 'jose';

import { ProviderUnavailable } from './token-verification.js';

export interface DiscoveryDocument {
  issuer: string;
  jwks_uri: string;
  token_endpoint?: string;
  [key: string]: unknown;
}

export interface RemoteKeysOptions {
  fetch?: typeof fetch;
  /** How long a failed discovery is remembered before the next attempt (protects a struggling IdP). */
  retryAfterMs?: number;
  /** How long fetched keys are trusted before jose reloads the JWKS (jose's `cacheMaxAge`). */
  jwksCacheMaxAgeMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

/**
 * The keys of a remote issuer, found through its discovery document. Nothing is fetched until the
 * first token arrives, and a failed fetch is retried on a later request, so the service starts and
 * keeps running while the IdP is briefly down (those requests get 503 meanwhile).
 */
export function remoteIssuerKeys(issuer: string, options: RemoteKeysOptions = {}): () => Promise<JWTVerifyGetKey> {
  const fetchImpl = options.fetch ?? fetch;
  const retryAfterMs = options.retryAfterMs ?? 2_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const now = options.now ?? Date.now;
  let keys: JWTVerifyGetKey | undefined;
  let pending: Promise<JWTVerifyGetKey> | undefined;
  let lastFailure: { atMs: number; error: unknown } | undefined;

  const discover = async (): Promise<JWTVerifyGetKey> => {
    const document = await fetchDiscovery(issuer, fetchImpl, timeoutMs);
    return createRemoteJWKSet(new URL(document.jwks_uri), {
      timeoutDuration: timeoutMs,
      ...(options.jwksCacheMaxAgeMs === undefined ? {} : { cacheMaxAge: options.jwksCacheMaxAgeMs }),
      [customFetch]: jwksFetch(fetchImpl),
    });
  };

  return async () => {
    if (keys) return keys;
    if (pending) return pending;
    if (lastFailure && now() - lastFailure.atMs < retryAfterMs) throw lastFailure.error;
    pending = discover()
      .then(
        (found) => {
          keys = found;
          lastFailure = undefined;
          return found;
        },
        (error: unknown) => {
          lastFailure = { atMs: now(), error };
          throw error;
        },
      )
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };
}

/** `<issuer>/.well-known/openid-configuration`, checked as OIDC Discovery §4.3 asks. */
export async function fetchDiscovery(issuer: string, fetchImpl: typeof fetch, timeoutMs: number): Promise<DiscoveryDocument> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  let response: Response;
  try {
    response = await fetchImpl(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (cause) {
    throw new ProviderUnavailable(`OIDC discovery at ${url} failed`, { cause });
  }
  if (response.status !== 200) throw new ProviderUnavailable(`OIDC discovery at ${url} answered ${response.status}`);
  let document: unknown;
  try {
    document = await response.json();
  } catch (cause) {
    throw new ProviderUnavailable(`OIDC discovery at ${url} did not answer JSON`, { cause });
  }
  if (typeof document !== 'object' || document === null) throw new ProviderUnavailable(`OIDC discovery at ${url} is not an object`);
  const { issuer: announced, jwks_uri: jwksUri } = document as Record<string, unknown>;
  if (announced !== issuer) {
    // A mismatch means a misconfigured issuer URL (e.g. a trailing slash or an internal host name).
    throw new ProviderUnavailable(`OIDC discovery at ${url} names the issuer ${JSON.stringify(announced)}, not the configured ${JSON.stringify(issuer)}`);
  }
  if (typeof jwksUri !== 'string' || !URL.canParse(jwksUri)) throw new ProviderUnavailable(`OIDC discovery at ${url} has no usable jwks_uri`);
  return document as DiscoveryDocument;
}

/** jose's JWKS fetch, with transport failures and non-200 answers marked as the provider's fault. */
function jwksFetch(fetchImpl: typeof fetch): typeof fetch {
  return async (input, init) => {
    let response: Response;
    try {
      response = await fetchImpl(input, init);
    } catch (cause) {
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- input is a URL or a string here: both stringify to the address
      throw new ProviderUnavailable(`fetching the JWKS at ${String(input)} failed`, { cause });
    }
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- input is a URL or a string here: both stringify to the address
    if (response.status !== 200) throw new ProviderUnavailable(`the JWKS at ${String(input)} answered ${response.status}`);
    return response;
  };
}
