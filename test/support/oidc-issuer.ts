/**
 * A real OIDC issuer for tests: discovery and JWKS over HTTP on 127.0.0.1 (port 0 unless given),
 * RS256 and ES256 keys made with jose, and minting helpers for good and deliberately bad tokens.
 * Paths and token shapes mimic Keycloak (`/realms/test`, `/protocol/openid-connect/certs`; ID tokens
 * carry `typ: "ID"` and `azp` = the client, access tokens `typ: "Bearer"`, `aud: "account"` and
 * `azp` = the client, a gateway's service token `azp: "gateway"`). It counts requests so tests can
 * prove what was (not) fetched, and `available = false` makes it answer 503.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { SignJWT, UnsecuredJWT, exportJWK, exportSPKI, generateKeyPair } from 'jose';
import type { CryptoKey, JWK, JWTPayload } from 'jose';

import type { IdentityConfig } from '../../src/domain/identity/identity-config.js';

type Alg = 'RS256' | 'ES256';
type TokenKind = 'id' | 'access';

export interface MintOptions {
  alg?: Alg;
  /** Overrides the header's kid (an unknown one tests key lookup). */
  kid?: string;
  issuer?: string;
  audience?: string | string[];
  /** Seconds from now; negative mints an already expired token. Default 300. */
  expiresIn?: number;
  /** Sign with a key that is not in the JWKS, under a kid that is (a bad signature). */
  foreignKey?: boolean;
  /** The JOSE header's `typ` (default `JWT`, as Keycloak writes); null leaves it out. */
  typ?: string | null;
}

/** The client a token of `bad.otherClient` was issued to: another client of the same realm. */
export const OTHER_CLIENT = 'some-other-client';

export interface TestIssuer {
  readonly issuer: string;
  readonly clientId: string;
  readonly port: number;
  /** Requests served, per document. */
  readonly requests: { discovery: number; jwks: number };
  /** When false, discovery and JWKS answer 503 (the IdP is "down"). */
  available: boolean;
  /** Claims are merged over defaults; a claim set to undefined is left out. */
  idToken(claims?: JWTPayload, options?: MintOptions): Promise<string>;
  accessToken(claims?: JWTPayload, options?: MintOptions): Promise<string>;
  /** An access token of a service account with these roles at `realm_access.roles`. */
  serviceToken(roles: string[], options?: MintOptions): Promise<string>;
  bad: {
    expired(kind?: TokenKind): Promise<string>;
    wrongIssuer(kind?: TokenKind): Promise<string>;
    wrongAudience(kind?: TokenKind): Promise<string>;
    /**
     * A token the issuer issued to another client of its realm: `aud` and `azp` are that client
     * (a replay of another application's token).
     */
    otherClient(kind?: TokenKind, claims?: JWTPayload): Promise<string>;
    foreignKey(kind?: TokenKind): Promise<string>;
    unknownKid(kind?: TokenKind): Promise<string>;
    algNone(kind?: TokenKind): Promise<string>;
    /** HS256 keyed with the published RSA public key: the classic algorithm-confusion attack. */
    hmacWithPublicKey(kind?: TokenKind): Promise<string>;
    malformed(): string;
  };
  /** An identity configuration pointing at this issuer. */
  identityConfig(oidc?: Partial<IdentityConfig['oidc']>): IdentityConfig;
  close(): Promise<void>;
}

interface KeyPair {
  kid: string;
  alg: Alg;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function keyPair(alg: Alg, kid: string): Promise<KeyPair & { publicKey: CryptoKey }> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

export async function startTestIssuer(options: { clientId?: string; port?: number } = {}): Promise<TestIssuer> {
  const clientId = options.clientId ?? 'convene';
  const rsa = await keyPair('RS256', 'rs-1');
  const ec = await keyPair('ES256', 'es-1');
  const foreign = { rsa: await keyPair('RS256', 'rs-1'), ec: await keyPair('ES256', 'es-1') };
  const requests = { discovery: 0, jwks: 0 };
  const realmPath = '/realms/test';
  let issuer = '';
  const state = { available: true };

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (path === `${realmPath}/.well-known/openid-configuration`) {
      requests.discovery++;
      if (!state.available) return send(503, { error: 'down' });
      return send(200, {
        issuer,
        jwks_uri: `${issuer}/protocol/openid-connect/certs`,
        token_endpoint: `${issuer}/protocol/openid-connect/token`,
        id_token_signing_alg_values_supported: ['RS256', 'ES256'],
      });
    }
    if (path === `${realmPath}/protocol/openid-connect/certs`) {
      requests.jwks++;
      if (!state.available) return send(503, { error: 'down' });
      return send(200, { keys: [rsa.publicJwk, ec.publicJwk] });
    }
    send(404, { error: 'not found' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  issuer = `http://127.0.0.1:${port}${realmPath}`;

  const withoutUndefined = (claims: JWTPayload): JWTPayload => Object.fromEntries(Object.entries(claims).filter(([, value]) => value !== undefined));

  const mint = async (claims: JWTPayload, defaultAudience: string, mintOptions: MintOptions = {}): Promise<string> => {
    const alg = mintOptions.alg ?? 'RS256';
    const key = mintOptions.foreignKey ? (alg === 'RS256' ? foreign.rsa : foreign.ec) : alg === 'RS256' ? rsa : ec;
    const issuedAt = Math.floor(Date.now() / 1000);
    const typ = mintOptions.typ === undefined ? 'JWT' : mintOptions.typ;
    return new SignJWT(withoutUndefined(claims))
      .setProtectedHeader({ alg, kid: mintOptions.kid ?? key.kid, ...(typ === null ? {} : { typ }) })
      .setIssuer(mintOptions.issuer ?? issuer)
      .setAudience(mintOptions.audience ?? defaultAudience)
      .setIssuedAt(issuedAt - (mintOptions.expiresIn !== undefined && mintOptions.expiresIn < 0 ? 3600 : 0))
      .setExpirationTime(issuedAt + (mintOptions.expiresIn ?? 300))
      .sign(key.privateKey);
  };

  const idDefaults = (): JWTPayload => ({
    typ: 'ID',
    azp: clientId,
    sub: 'user-1',
    email: 'user-1@example.test',
    given_name: 'Ada',
    family_name: 'Lovelace',
  });
  const accessDefaults = (): JWTPayload => ({ typ: 'Bearer', sub: 'user-1', azp: clientId, scope: 'openid profile email' });
  const idToken = (claims: JWTPayload = {}, o?: MintOptions) => mint({ ...idDefaults(), ...claims }, clientId, o);
  const accessToken = (claims: JWTPayload = {}, o?: MintOptions) => mint({ ...accessDefaults(), ...claims }, 'account', o);
  const ofKind = (kind: TokenKind, o: MintOptions) => (kind === 'id' ? idToken({}, o) : accessToken({}, o));
  const payloadOf = (kind: TokenKind): JWTPayload => ({
    ...(kind === 'id' ? idDefaults() : accessDefaults()),
    iss: issuer,
    aud: kind === 'id' ? clientId : 'account',
    iat: Math.floor(Date.now() / 1000),
    exp: Math.floor(Date.now() / 1000) + 300,
  });

  return {
    issuer,
    clientId,
    port,
    requests,
    get available() {
      return state.available;
    },
    set available(value: boolean) {
      state.available = value;
    },
    idToken,
    accessToken,
    serviceToken: (roles, o) =>
      mint({ typ: 'Bearer', sub: 'service-account-gateway', azp: 'gateway', scope: 'profile email', realm_access: { roles } }, 'account', o),
    bad: {
      expired: (kind = 'id') => ofKind(kind, { expiresIn: -600 }),
      wrongIssuer: (kind = 'id') => ofKind(kind, { issuer: 'http://127.0.0.1:1/realms/other' }),
      wrongAudience: (kind = 'id') => ofKind(kind, { audience: 'someone-else' }),
      otherClient: (kind = 'access', claims = {}) =>
        kind === 'id'
          ? idToken({ azp: OTHER_CLIENT, ...claims }, { audience: OTHER_CLIENT })
          : accessToken({ azp: OTHER_CLIENT, ...claims }, { audience: OTHER_CLIENT }),
      foreignKey: (kind = 'id') => ofKind(kind, { foreignKey: true }),
      unknownKid: (kind = 'id') => ofKind(kind, { kid: 'no-such-kid' }),
      algNone: async (kind = 'id') => new UnsecuredJWT(payloadOf(kind)).encode(),
      hmacWithPublicKey: async (kind = 'id') =>
        new SignJWT(payloadOf(kind)).setProtectedHeader({ alg: 'HS256', kid: rsa.kid }).sign(new TextEncoder().encode(await exportSPKI(rsa.publicKey))),
      malformed: () => 'not-a-jwt',
    },
    identityConfig: (oidc = {}) => ({
      http: { port: 0 },
      database: { data_dir: './data', in_memory: true },
      oidc: {
        issuer,
        client_id: clientId,
        service_roles_claim: 'realm_access.roles',
        call_in_role: 'call-in',
        provider_name: 'Test IdP',
        ...oidc,
      },
      dev: { identity_provider: false },
      tariffs: {},
    }),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
