import { errors as joseErrors, jwtVerify } from 'jose';
import type { JWTPayload, JWTVerifyGetKey, ProtectedHeaderParameters } from 'jose';

/**
 * Asymmetric algorithms only: `none` is never accepted, and HS* is excluded so a public key from the
 * JWKS can never be used as an HMAC secret (algorithm confusion).
 */
export const ALLOWED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'EdDSA', 'Ed25519'];

/** Seconds of clock skew tolerated between us and the identity provider on exp/nbf/iat. */
export const CLOCK_TOLERANCE_SECONDS = 10;

/** Tokens are a few KiB at most; anything far larger is refused before any parsing or hashing. */
const MAX_TOKEN_LENGTH = 32 * 1024;

/** The token itself is bad; `reason` is a short phrase for the error message. */
export class TokenRejected extends Error {
  constructor(
    readonly reason: string,
    readonly expired = false,
  ) {
    super(reason);
    this.name = 'TokenRejected';
  }
}

/** The issuer's discovery document or keys could not be obtained; the token may well be fine. */
export class ProviderUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProviderUnavailable';
  }
}

export interface VerifyOptions {
  issuer: string;
  audience?: string;
  now: () => number;
}

export interface VerifiedJwt {
  header: ProtectedHeaderParameters;
  payload: JWTPayload & { sub: string; exp: number };
}

/** Verifies signature, issuer, audience and expiry; requires `sub` and `exp`. */
export async function verifyJwt(token: string, keys: JWTVerifyGetKey, options: VerifyOptions): Promise<VerifiedJwt> {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) throw new TokenRejected('the token is malformed');
  try {
    const { payload, protectedHeader } = await jwtVerify(token, keys, {
      issuer: options.issuer,
      ...(options.audience === undefined ? {} : { audience: options.audience }),
      algorithms: ALLOWED_ALGORITHMS,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: new Date(options.now()),
      requiredClaims: ['sub', 'exp'],
    });
    if (typeof payload.sub !== 'string' || payload.sub === '') throw new TokenRejected('the "sub" claim is not a non-empty string');
    return { header: protectedHeader, payload: payload as VerifiedJwt['payload'] };
  } catch (error) {
    throw classify(error);
  }
}

/** Turns jose's errors into "bad token" or "provider unavailable"; anything else is a bug and passes through. */
function classify(error: unknown): unknown {
  if (error instanceof TokenRejected || error instanceof ProviderUnavailable) return error;
  if (error instanceof joseErrors.JWTExpired) return new TokenRejected('the token has expired', true);
  if (error instanceof joseErrors.JWTClaimValidationFailed) return new TokenRejected(claimReason(error));
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return new TokenRejected('the signature does not verify');
  if (error instanceof joseErrors.JWKSNoMatchingKey) return new TokenRejected("no key of the issuer matches the token's key id (kid)");
  if (error instanceof joseErrors.JWKSMultipleMatchingKeys) return new TokenRejected("the token's key id (kid) matches several keys");
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return new TokenRejected('the signing algorithm is not allowed');
  if (error instanceof joseErrors.JWSInvalid || error instanceof joseErrors.JWTInvalid) return new TokenRejected('the token is malformed');
  // A JWKS document that does not parse or is not a key set is the provider's fault, not the token's.
  if (error instanceof joseErrors.JWKSInvalid || error instanceof joseErrors.JWKSTimeout) {
    return new ProviderUnavailable("the issuer's JWKS is unusable", { cause: error });
  }
  if (error instanceof joseErrors.JOSEError && error.code === 'ERR_JOSE_GENERIC') {
    return new ProviderUnavailable(error.message, { cause: error });
  }
  if (error instanceof joseErrors.JOSEError) return new TokenRejected(`the token cannot be verified (${error.code})`);
  return error;
}

function claimReason(error: InstanceType<typeof joseErrors.JWTClaimValidationFailed>): string {
  if (error.reason === 'missing') return `the token lacks the "${error.claim}" claim`;
  switch (error.claim) {
    case 'iss':
      return 'the token was issued by another issuer';
    case 'aud':
      return 'the token is meant for another audience';
    case 'nbf':
      return 'the token is not yet valid';
    case 'iat':
      return 'the token was issued in the future';
    default:
      return `the "${error.claim}" claim is invalid`;
  }
}
