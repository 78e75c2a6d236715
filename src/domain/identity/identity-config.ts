import type { Config } from '../../config/schema.js';

/**
 * The slice of the service configuration that the identity layer reads, derived from `Config` so the
 * two cannot drift; tests can build just these keys.
 */
export interface IdentityConfig {
  http: Pick<Config['http'], 'port' | 'public_url'>;
  database: Pick<Config['database'], 'data_dir' | 'in_memory'>;
  oidc: Config['oidc'];
  dev: Config['dev'];
  tariffs: Pick<Config['tariffs'], 'claim'>;
}

/** A configuration that cannot work; thrown at start-up so the service refuses to run with it. */
export class IdentityConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IdentityConfigurationError';
  }
}

export const isProduction = (): boolean => process.env.NODE_ENV === 'production';

/**
 * Which provider a configuration selects: the configured issuer, else the development provider when
 * `[dev] identity_provider` is on outside production. Anything else cannot start (issue 8: the
 * development provider refuses NODE_ENV=production). main.ts uses this to decide whether to build the
 * development provider and mount its routes.
 */
export function identityMode(config: Pick<IdentityConfig, 'oidc' | 'dev'>): 'issuer' | 'dev' {
  if (config.oidc.issuer) return 'issuer';
  if (!config.dev.identity_provider) {
    throw new IdentityConfigurationError(
      'No identity provider is configured: set [oidc] issuer (OIDC_ISSUER), or for local development [dev] identity_provider = true',
    );
  }
  if (isProduction()) {
    throw new IdentityConfigurationError('The development identity provider refuses to run with NODE_ENV=production; configure [oidc] issuer (OIDC_ISSUER)');
  }
  return 'dev';
}
