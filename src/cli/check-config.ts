/**
 * `convene check-config`: everything the service checks about its configuration before it opens the
 * database (the schema of every key, the tariffs, the identity provider allowed here), without
 * opening, creating or migrating anything. Prints what the configuration selects.
 */
import type { Config } from '../config/schema.js';
import { identityMode } from '../domain/identity/identity.js';
import { createTariffCatalog } from '../domain/tariffs/tariff-catalog.js';
import { databaseTarget } from './database.js';

export function checkConfig(config: Config): void {
  const identity = identityMode(config) === 'issuer' ? `OIDC issuer ${config.oidc.issuer}` : 'the development identity provider';
  createTariffCatalog(config.tariffs);
  const lines = [
    `listens on ${config.http.host}:${config.http.port}`,
    `database: ${databaseTarget(config)}`,
    `signaling: ${config.redis.url ? 'Redis' : 'in-process (one instance)'}`,
    `identity: ${identity}`,
    `tariffs: ${Object.keys(config.tariffs.definitions).join(', ')} (default ${config.tariffs.default})`,
    `mail: ${config.smtp.url ? 'sent over SMTP' : 'kept in the outbox (no [smtp] url)'}`,
  ];
  console.log(`configuration OK\n${lines.map((line) => `  ${line}`).join('\n')}`);
}
