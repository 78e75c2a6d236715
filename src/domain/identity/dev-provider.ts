/**
 * The embedded development identity provider: an ES256 key pair, a discovery document and a JWKS,
 * and a way to mint tokens. It has no authorization or token endpoint and no login page — tokens come
 * only from `npm run dev-token -- <name>` (or `issueTokens` in tests), which is all a developer needs
 * to call the API with curl. Never in production: it refuses to be created when NODE_ENV=production.
 */
import { randomUUID } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK } from 'jose';
import type { JSONWebKeySet, JWK, JWTPayload } from 'jose';

import { IdentityConfigurationError, isProduction } from './identity-config.js';
import type { IdentityConfig } from './identity-config.js';

const ALG = 'ES256';

export interface DevTokenRequest {
  subject: string;
  email?: string;
  given_name?: string;
  family_name?: string;
  name?: string;
  /** Written at the provider's roles claim path (default `realm_access.roles`). */
  roles?: string[];
  /** The user's groups, as the `x_grp` claim (what the chat's group messages go by). */
  groups?: string[];
  lifetimeSeconds?: number;
}

export interface DevTokens {
  id_token: string;
  access_token: string;
  expires_at: Date;
}

export interface DevIdentityProvider {
  readonly issuer: string;
  readonly clientId: string;
  /** The `aud` of access tokens: the first configured audience, else the client id. */
  readonly audience: string;
  /** The `azp` of access tokens: the first configured authorized party, else the client id. */
  readonly authorizedParty: string;
  jwks(): JSONWebKeySet;
  discovery(): Record<string, unknown>;
  issueTokens(request: DevTokenRequest): Promise<DevTokens>;
}

export interface DevProviderOptions {
  issuer: string;
  /** JSON JWK of the private key; created (mode 0600) when missing. Without it the key lives in memory. */
  keyFile?: string;
  clientId?: string;
  audience?: string;
  authorizedParty?: string;
  rolesClaim?: string;
}

export async function createDevIdentityProvider(options: DevProviderOptions): Promise<DevIdentityProvider> {
  if (isProduction()) {
    throw new IdentityConfigurationError('The development identity provider refuses to run with NODE_ENV=production; configure [oidc] issuer');
  }
  const privateJwk = options.keyFile ? await loadOrCreateKey(options.keyFile) : await generateJwk();
  const signingKey = await importJWK(privateJwk, ALG);
  const { kty, crv, x, y, kid } = privateJwk;
  const publicJwk: JWK = { kty, crv, x, y, kid, alg: ALG, use: 'sig' };
  const issuer = options.issuer;
  const clientId = options.clientId ?? 'convene';
  const audience = options.audience ?? clientId;
  const authorizedParty = options.authorizedParty ?? clientId;
  const rolesPath = (options.rolesClaim ?? 'realm_access.roles').split('.');

  // access tokens are typed as such (RFC 9068), so that an ID token can never pass for one
  const sign = (claims: JWTPayload, typ: 'JWT' | 'at+jwt', aud: string, issuedAt: number, expiresAt: number) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: ALG, kid: publicJwk.kid!, typ })
      .setIssuer(issuer)
      .setAudience(aud)
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .setJti(randomUUID())
      .sign(signingKey);

  return {
    issuer,
    clientId,
    audience,
    authorizedParty,
    jwks: () => ({ keys: [{ ...publicJwk }] }),
    discovery: () => ({
      issuer,
      jwks_uri: `${issuer}/jwks`,
      id_token_signing_alg_values_supported: [ALG],
      subject_types_supported: ['public'],
      claims_supported: ['sub', 'email', 'given_name', 'family_name', 'name', 'x_grp'],
    }),
    async issueTokens(request) {
      const issuedAt = Math.floor(Date.now() / 1000);
      const expiresAt = issuedAt + (request.lifetimeSeconds ?? 3600);
      const profile: JWTPayload = { sub: request.subject };
      for (const key of ['email', 'given_name', 'family_name', 'name'] as const) {
        if (request[key] !== undefined) profile[key] = request[key];
      }
      if (request.email !== undefined) profile.email_verified = true;
      if (request.groups !== undefined) profile.x_grp = request.groups;
      const accessClaims: JWTPayload = { ...profile, azp: authorizedParty, client_id: authorizedParty, scope: 'openid profile email' };
      if (request.roles) setAtPath(accessClaims, rolesPath, request.roles);
      const [idToken, accessToken] = await Promise.all([
        sign({ ...profile, auth_time: issuedAt }, 'JWT', clientId, issuedAt, expiresAt),
        sign(accessClaims, 'at+jwt', audience, issuedAt, expiresAt),
      ]);
      return { id_token: idToken, access_token: accessToken, expires_at: new Date(expiresAt * 1000) };
    },
  };
}

/** `<public_url or http://localhost:<port>>/dev-idp`, where the service mounts `devIdentityRouter`. */
export function devIssuerUrl(config: Pick<IdentityConfig, 'http'>): string {
  const base = config.http.public_url?.replace(/\/+$/, '') ?? `http://localhost:${config.http.port}`;
  return `${base}/dev-idp`;
}

/** `<data_dir>/dev-idp-key.json`, shared by the service and `npm run dev-token`; none for an in-memory database. */
export function devKeyFile(config: Pick<IdentityConfig, 'database'>): string | undefined {
  return config.database.in_memory ? undefined : join(config.database.data_dir, 'dev-idp-key.json');
}

/** The provider exactly as the service and `npm run dev-token` build it from one configuration. */
export function devProviderFromConfig(config: IdentityConfig): Promise<DevIdentityProvider> {
  const keyFile = devKeyFile(config);
  return createDevIdentityProvider({
    issuer: devIssuerUrl(config),
    clientId: config.oidc.client_id,
    rolesClaim: config.oidc.service_roles_claim,
    ...(keyFile ? { keyFile } : {}),
    ...(config.oidc.audiences ? { audience: config.oidc.audiences[0]! } : {}),
    ...(config.oidc.authorized_parties ? { authorizedParty: config.oidc.authorized_parties[0]! } : {}),
  });
}

async function generateJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg: ALG };
}

async function loadOrCreateKey(file: string): Promise<JWK> {
  try {
    return parseKey(file, await readFile(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dirname(file), { recursive: true });
  const jwk = await generateJwk();
  // Write aside, then link into place: a concurrent starter either wins the link or reads a complete file.
  const temporary = `${file}.${process.pid}.${randomUUID()}.tmp`;
  await writeFile(temporary, JSON.stringify(jwk, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
  try {
    await link(temporary, file);
    return jwk;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return parseKey(file, await readFile(file, 'utf8'));
  } finally {
    await unlink(temporary);
  }
}

function parseKey(file: string, text: string): JWK {
  let jwk: unknown;
  try {
    jwk = JSON.parse(text);
  } catch {
    throw new IdentityConfigurationError(`The development IdP key file ${file} is not JSON; delete it to create a new key`);
  }
  const key = jwk as JWK | null | undefined;
  if (key?.kty !== 'EC' || key.crv !== 'P-256' || !key.d || !key.x || !key.y || !key.kid) {
    throw new IdentityConfigurationError(`The development IdP key file ${file} is not a P-256 private JWK with a kid; delete it to create a new key`);
  }
  return key;
}

function setAtPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  path.slice(0, -1).forEach((segment) => {
    const next = node[segment];
    node = (node[segment] = typeof next === 'object' && next !== null ? next : {}) as Record<string, unknown>;
  });
  node[path[path.length - 1]!] = value;
}
