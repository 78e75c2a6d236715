import type { AssetService } from '../../domain/assets/assets.service.js';
import type { CalendarFeedService } from '../../domain/calendar-feed/calendar-feed.service.js';
import type { EventInviteService } from '../../domain/events/event-invites.service.js';
import type { EventService } from '../../domain/events/events.service.js';
import type { HealthService } from '../../domain/health/health.service.js';
import type { Identity } from '../../domain/identity/identity.js';
import type { InviteService } from '../../domain/invites/invites.service.js';
import type { RoomService } from '../../domain/rooms/rooms.service.js';
import type { SipService } from '../../domain/sip/sip.service.js';
import type { StreamingTargetService } from '../../domain/streaming/streaming-targets.service.js';
import type { StartService } from '../../domain/tickets/start.service.js';
import type { TurnServerCredentials } from '../../domain/turn/turn-credentials.js';
import type { UserService } from '../../domain/users/users.service.js';
import type { WebhookSubscriptionService } from '../../domain/webhooks/subscriptions.service.js';

/**
 * What the handlers work with: the domain services of one instance, each built once by server.ts,
 * and the few configured values an answer needs. Never the database, the configuration, a store or
 * Redis: those are the services' own.
 */
export interface Services {
  identity: Identity;
  users: UserService;
  /** Room invite codes: their management, verification and guest lookup. */
  invites: InviteService;
  rooms: RoomService;
  sip: SipService;
  streamingTargets: StreamingTargetService;
  assets: AssetService;
  events: EventService;
  eventInvites: EventInviteService;
  calendarFeeds: CalendarFeedService;
  webhookSubscriptions: WebhookSubscriptionService;
  /** The signaling start operations: tickets and resumption. */
  start: StartService;
  /** Fresh TURN credentials for every configured server (500 `turn_not_configured` without one). */
  turnServers: () => TurnServerCredentials[];
  /** Whether the database and Redis answer (`/health`, `/ready`). */
  health: HealthService;
  /** `[http] public_url`: the origin of links in answers (else the request's own). */
  publicUrl: string | undefined;
}
