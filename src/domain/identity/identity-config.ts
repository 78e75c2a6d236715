/**
 * The slice of the service configuration (src/config, brief's `Config`) that the identity layer
 * reads. Declared structurally so the full `Config` is assignable to it and tests can build just
 * these keys.
 */
export interface IdentityConfig {
  http: { port: number; public_url?: string };
  database: { data_dir: string; in_memory: boolean };
  oidc: {
    issuer?: string;
    client_id: string;
    audience?: string;
    service_roles_claim: string;
    call_in_role: string;
    provider_name: string;
    admin_api_url?: string;
    admin_client_id?: string;
    admin_client_secret?: string;
    admin_token_url?: string;
  };
  dev: { identity_provider: boolean };
  tariffs: { claim?: string };
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
    throw new IdentityConfigurationError(
      'The development identity provider refuses to run with NODE_ENV=production; configure [oidc] issuer (OIDC_ISSUER)',
    );
  }
  return 'dev';
}
