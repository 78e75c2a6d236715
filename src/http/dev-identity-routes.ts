import express from 'express';

import type { DevIdentityProvider } from '../domain/identity/dev-provider.js';

/**
 * The development identity provider's public documents, mounted at `/dev-idp` (its issuer URL is
 * `devIssuerUrl(config)`): discovery and JWKS, so any OIDC client library can verify its tokens.
 * Only mounted when the development provider is in use.
 */
export function devIdentityRouter(provider: DevIdentityProvider): express.Router {
  const router = express.Router();
  router.get('/.well-known/openid-configuration', (_req, res) => {
    res.set('access-control-allow-origin', '*').json(provider.discovery());
  });
  router.get('/jwks', (_req, res) => {
    res.set('access-control-allow-origin', '*').type('application/jwk-set+json').json(provider.jwks());
  });
  return router;
}
