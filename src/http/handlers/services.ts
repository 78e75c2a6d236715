import type { Config } from '../../config/schema.js';
import type { Database } from '../../db/connect.js';
import type { Identity } from '../../domain/identity/identity.js';
import type { TariffCatalog } from '../../domain/tariffs/tariff-catalog.js';
import type { UserService } from '../../domain/users/users.service.js';

/** What the handlers work with: the domain services of one instance. */
export interface Services {
  config: Config;
  database: Database;
  identity: Identity;
  users: UserService;
  tariffs: TariffCatalog;
}
