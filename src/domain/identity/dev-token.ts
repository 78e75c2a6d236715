/**
 * What `npm run dev-token` does, apart from argument parsing and printing: checks that the
 * configuration really uses the development provider with a key the service shares, and mints the
 * tokens of a named developer user or of a call-in service account.
 */
import { devKeyFile, devProviderFromConfig } from './dev-provider.js';
import { IdentityConfigurationError, isProduction } from './identity-config.js';
import type { IdentityConfig } from './identity-config.js';

export interface DevTokenOptions {
  name: string;
  /** A service-account access token with `[oidc] call_in_role`, instead of a user's tokens. */
  service?: boolean;
  lifetimeSeconds?: number;
  /** The user's groups (`x_grp`). */
  groups?: string[];
}

export interface DevTokenOutput {
  issuer: string;
  subject: string;
  expires_at: string;
  access_token: string;
  id_token?: string;
  email?: string;
  roles?: string[];
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const MAX_LIFETIME_SECONDS = 30 * 24 * 3600;

const capitalised = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/** `alice.smith` → Alice Smith; a single word gets the family name "Example". */
export function devUser(name: string): { subject: string; email: string; given_name: string; family_name: string; name: string } {
  const [first = name, ...rest] = name
    .split(/[._-]+/)
    .filter(Boolean)
    .map(capitalised);
  const family = rest.length > 0 ? rest.join(' ') : 'Example';
  return { subject: `dev-${name}`, email: `${name}@example.test`, given_name: first, family_name: family, name: `${first} ${family}` };
}

export async function mintDevTokens(config: IdentityConfig, options: DevTokenOptions): Promise<DevTokenOutput> {
  if (isProduction()) throw new IdentityConfigurationError('development tokens are refused with NODE_ENV=production');
  if (config.oidc.issuer) {
    throw new IdentityConfigurationError(`An OIDC issuer is configured (${config.oidc.issuer}); get tokens from it, not from dev-token`);
  }
  if (!config.dev.identity_provider) {
    throw new IdentityConfigurationError('The development identity provider is off; set [dev] identity_provider = true');
  }
  if (!devKeyFile(config)) {
    throw new IdentityConfigurationError('With an in-memory database the service keeps its development key in memory, so tokens minted here would not verify');
  }
  if (!NAME.test(options.name)) {
    throw new IdentityConfigurationError('The name must be 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit');
  }
  const lifetimeSeconds = options.lifetimeSeconds ?? 3600;
  if (!Number.isInteger(lifetimeSeconds) || lifetimeSeconds < 1 || lifetimeSeconds > MAX_LIFETIME_SECONDS) {
    throw new IdentityConfigurationError(`The lifetime must be a whole number of seconds from 1 to ${MAX_LIFETIME_SECONDS}`);
  }

  const provider = await devProviderFromConfig(config);
  if (options.service) {
    const subject = `service-account-${options.name}`;
    const roles = [config.oidc.call_in_role];
    const tokens = await provider.issueTokens({ subject, roles, lifetimeSeconds });
    return { issuer: provider.issuer, subject, roles, access_token: tokens.access_token, expires_at: tokens.expires_at.toISOString() };
  }
  const { subject, ...profile } = devUser(options.name);
  const tokens = await provider.issueTokens({ subject, ...profile, lifetimeSeconds, ...(options.groups ? { groups: options.groups } : {}) });
  return {
    issuer: provider.issuer,
    subject,
    email: profile.email,
    id_token: tokens.id_token,
    access_token: tokens.access_token,
    expires_at: tokens.expires_at.toISOString(),
  };
}
