import type { Redis } from 'ioredis';
import type { Config } from '../../config/schema.js';
import type { AssetStorage } from '../../domain/assets/asset-storage.js';
import type { Database } from '../../db/connect.js';
import type { CursorKey } from '../../domain/events/cursor.js';
import type { Clock } from '../../domain/clock.js';
import type { Identity } from '../../domain/identity/identity.js';
import type { InviteService } from '../../domain/invites/invites.service.js';
import type { RateLimiter } from '../../domain/rate-limit/rate-limiter.js';
import type { TicketCaps } from '../../domain/tickets/ticket-caps.js';
import type { TariffCatalog } from '../../domain/tariffs/tariff-catalog.js';
import type { UserService } from '../../domain/users/users.service.js';
import type { SignalingStore } from '../../domain/tickets/signaling-store.js';

/** What the handlers work with: the domain services of one instance. */
export interface Services {
  config: Config;
  database: Database;
  identity: Identity;
  users: UserService;
  tariffs: TariffCatalog;
  /** The bytes of room assets (metadata is in the `assets` table). */
  assetStorage: AssetStorage;
  /** Tickets and resumption records (in-process, or Redis when configured). */
  signalingStore: SignalingStore;
  /** Failed-guess counting for passwords, invite codes and pins (shared through Redis when configured). */
  rateLimiter: RateLimiter;
  /** The Redis connection, when configured (the readiness probe pings it). */
  redis?: Redis;
  /** Caps on the signaling tickets issued per user, invite code and address (shared through Redis when configured). */
  ticketCaps: TicketCaps;
  /** Milliseconds since the epoch; injected so expiry can be tested without sleeping. */
  clock: Clock;
  /** Room invite codes: their management, verification and guest lookup. */
  invites: InviteService;
  /** Signs page cursors; the same on every instance (configured, or generated once in the database). */
  cursorSecret: CursorKey;
}
