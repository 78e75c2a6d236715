/**
 * Which verified tokens open the API (issue 22, finding 1). A signature of the right issuer is not
 * enough: every client of an identity-provider realm gets tokens from the same issuer, and every
 * client gets ID tokens too. An access token must therefore
 *
 * 1. be an access token: the JOSE header's `typ` is `at+jwt` (RFC 9068), or the claim `typ` is
 *    `Bearer` (Keycloak, whose ID tokens say `ID`). A token typed in neither place counts as an ID
 *    token when it carries a claim only ID tokens carry (`nonce`, `at_hash`, `c_hash`) or none that
 *    access tokens carry (`scope`, `scp`, `client_id`): an OpenID Connect ID token has no scope. A
 *    header `typ` other than `JWT` or `at+jwt`, or a claim `typ` other than `Bearer` (`Refresh`,
 *    `Logout`, …), is no access token either;
 * 2. be meant for Convene: its `aud` holds one of the accepted audiences, or its authorized party
 *    (`azp`, else RFC 9068's `client_id`) is an accepted one (`recipientsOf`).
 *
 * A login's ID token must not be typed as anything else (an access token addressed to the login
 * client is no ID token); an untyped one is left to the ID-token checks, as OpenID Connect types
 * none.
 */
import type { JWTPayload, ProtectedHeaderParameters } from 'jose';

import type { IdentityConfig } from './identity-config.js';
import { TokenRejected } from './token-verification.js';

/** Whom access tokens must be meant for. */
export interface Recipients {
  audiences: ReadonlySet<string>;
  authorizedParties: ReadonlySet<string>;
}

/**
 * `[oidc] audiences` and `authorized_parties`; when neither is configured, the login client
 * (`client_id`) in either role, so a configuration naming only its client is safe. When one is
 * configured, only what is configured counts.
 */
export function recipientsOf(oidc: IdentityConfig['oidc']): Recipients {
  if (!oidc.audiences && !oidc.authorized_parties) {
    return { audiences: new Set([oidc.client_id]), authorizedParties: new Set([oidc.client_id]) };
  }
  return { audiences: new Set(oidc.audiences ?? []), authorizedParties: new Set(oidc.authorized_parties ?? []) };
}

type Kind = 'access' | 'id' | 'other';

/** The kind a token declares in its header or its `typ` claim; undefined when it declares none. */
function declaredKind(header: ProtectedHeaderParameters, payload: JWTPayload): Kind | undefined {
  const headerType = typeof header.typ === 'string' ? header.typ.toLowerCase().replace(/^application\//, '') : undefined;
  if (headerType !== undefined && headerType !== 'jwt' && headerType !== 'at+jwt') return 'other';
  const claimType = payload.typ === undefined ? undefined : typeof payload.typ === 'string' ? payload.typ.toLowerCase() : 'other';
  const claimKind: Kind | undefined = claimType === undefined ? undefined : claimType === 'bearer' ? 'access' : claimType === 'id' ? 'id' : 'other';
  if (headerType === 'at+jwt') return claimKind === undefined || claimKind === 'access' ? 'access' : 'other';
  return claimKind;
}

const ID_TOKEN_ONLY_CLAIMS = ['nonce', 'at_hash', 'c_hash'];
const ACCESS_TOKEN_CLAIMS = ['scope', 'scp', 'client_id'];

function accessTokenKind(header: ProtectedHeaderParameters, payload: JWTPayload): Kind {
  const declared = declaredKind(header, payload);
  if (declared) return declared;
  if (ID_TOKEN_ONLY_CLAIMS.some((claim) => Object.hasOwn(payload, claim))) return 'id';
  return ACCESS_TOKEN_CLAIMS.some((claim) => Object.hasOwn(payload, claim)) ? 'access' : 'id';
}

/** Rule 1 and 2 above; `TokenRejected` saying which failed. */
export function checkAccessToken(header: ProtectedHeaderParameters, payload: JWTPayload, recipients: Recipients): void {
  const kind = accessTokenKind(header, payload);
  if (kind === 'id') throw new TokenRejected('the token is an ID token, not an access token');
  if (kind === 'other') throw new TokenRejected('the token is not an access token (its typ says otherwise)');
  const audiences = typeof payload.aud === 'string' ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud : [];
  if (audiences.some((audience) => recipients.audiences.has(audience))) return;
  const party = typeof payload.azp === 'string' ? payload.azp : typeof payload.client_id === 'string' ? payload.client_id : undefined;
  if (party !== undefined && recipients.authorizedParties.has(party)) return;
  throw new TokenRejected('the token was issued to another client (neither its aud nor its azp is accepted)');
}

/** A login's token must not declare itself anything but an ID token. */
export function checkIdTokenKind(header: ProtectedHeaderParameters, payload: JWTPayload): void {
  const declared = declaredKind(header, payload);
  if (declared === 'access') throw new TokenRejected('the token is an access token, not an ID token');
  if (declared === 'other') throw new TokenRejected('the token is not an ID token (its typ says otherwise)');
}
