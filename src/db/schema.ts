/**
 * The database as Kysely sees it: one interface per table of the migrations (`./migrations/`), and
 * per table the row types the repositories use: `XRow` (what a select returns), `NewXRow` (what an
 * insert takes) and `XPatch` (what an update takes).
 *
 * Types follow the type parsers of `connect.ts`, identical on pg and PGlite: timestamptz → Date,
 * bigint/count → number, arrays → arrays. Timestamps may be written as Date or ISO string.
 */
import type { ColumnType, Generated, Insertable, Kysely, Selectable, Updateable } from 'kysely';

/** A timestamptz: read as Date, written as Date or an ISO 8601 string. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** A timestamptz with a default (usually now()). */
type DefaultTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export type TariffStatus = 'default' | 'paid' | 'downgraded';
export type EventInviteRole = 'user' | 'moderator';
/** E-mail invitees are guests unless made moderators; they become `user` invitees when they register. */
export type EmailInviteRole = 'guest' | 'user' | 'moderator';
export type EventInviteStatus = 'pending' | 'accepted' | 'tentative' | 'declined';
export type EventExceptionStatus = 'ok' | 'cancelled';
export type StreamingTargetKind = 'custom';

export interface UsersTable {
  id: Generated<string>;
  oidc_issuer: string;
  oidc_sub: string;
  email: string;
  title: Generated<string>;
  firstname: Generated<string>;
  lastname: Generated<string>;
  display_name: string;
  avatar_url: Generated<string>;
  language: Generated<string>;
  dashboard_theme: Generated<string>;
  conference_theme: Generated<string>;
  /** null: the configured default tariff. */
  tariff_name: string | null;
  tariff_status: Generated<TariffStatus>;
  /** Expiry of the ID token of the last login. */
  id_token_exp: Timestamp | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
  /** When an operator disabled the user (`convene users disable`); null: enabled. */
  disabled_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface RoomsTable {
  id: Generated<string>;
  created_by: string;
  created_at: DefaultTimestamp;
  password: string | null;
  waiting_room: Generated<boolean>;
}

export interface SipConfigsTable {
  room_id: string;
  /** 10 decimal digits, unique: the call-in id. */
  sip_id: string;
  /** 10 decimal digits: the call-in pin. */
  password: string;
  lobby: Generated<boolean>;
}

export interface RoomInvitesTable {
  code: Generated<string>;
  room_id: string;
  created_by: string;
  created_at: DefaultTimestamp;
  updated_by: string;
  updated_at: DefaultTimestamp;
  active: Generated<boolean>;
  expiration: Timestamp | null;
}

export interface StreamingTargetsTable {
  id: Generated<string>;
  room_id: string;
  name: string;
  kind: Generated<StreamingTargetKind>;
  streaming_endpoint: string;
  streaming_key: string;
  public_url: string;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface AssetsTable {
  id: Generated<string>;
  room_id: string;
  filename: string;
  /** The signaling module that produced the asset, if any. */
  namespace: string | null;
  kind: string | null;
  content_type: Generated<string>;
  /** Bytes. */
  size: number;
  /** Where the storage interface keeps the bytes. */
  storage_key: string;
  created_at: DefaultTimestamp;
}

export interface RoomBansTable {
  room_id: string;
  user_id: string;
  created_by: string;
  created_at: DefaultTimestamp;
}

/**
 * A time-independent event has every time column null; a timed one has all but `range_end` set.
 * `starts_at`/`ends_at` are the first occurrence's, `range_end` the end of the last occurrence
 * (null: unbounded series).
 */
export interface EventsTable {
  id: Generated<string>;
  room_id: string;
  created_by: string;
  created_at: DefaultTimestamp;
  updated_by: string;
  updated_at: DefaultTimestamp;
  title: string;
  description: Generated<string>;
  is_time_independent: boolean;
  is_all_day: boolean | null;
  starts_at: Timestamp | null;
  /** IANA time zone name. */
  starts_at_tz: string | null;
  ends_at: Timestamp | null;
  ends_at_tz: string | null;
  duration_secs: number | null;
  /** RFC 5545 lines (RRULE, RDATE, EXDATE, EXRULE); empty for a single event. */
  recurrence_pattern: Generated<string[]>;
  range_end: Timestamp | null;
  /**
   * Where the occurrences lie, moved ones included: the earliest start and the latest end (null:
   * unbounded series); both null for a time-independent event. The time range of `GET /events`.
   */
  span_start: Timestamp | null;
  span_end: Timestamp | null;
  /**
   * How far the span reaches from `starts_at` (generated from the three): 0 at most 48 hours
   * either way, 1 at most 400 days, 2 further or unbounded, null without a span. `GET /events`
   * bounds `starts_at` per class (migration 2026_11_29_0001).
   */
  span_class: ColumnType<number | null, never, never>;
  is_adhoc: Generated<boolean>;
  /** The iCalendar SEQUENCE of the last notification sent; bump it with every update mail. */
  ical_sequence: Generated<number>;
  /** Whether readers of the room's event get its meeting details (invite code, call-in, stream links). */
  show_meeting_details: Generated<boolean>;
}

export interface EventExceptionsTable {
  event_id: string;
  /** The original occurrence's UTC start (the instance id). */
  instance_start: Timestamp;
  status: Generated<EventExceptionStatus>;
  title: string | null;
  description: string | null;
  is_all_day: boolean | null;
  starts_at: Timestamp | null;
  starts_at_tz: string | null;
  ends_at: Timestamp | null;
  ends_at_tz: string | null;
  created_by: string;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface EventInvitesTable {
  event_id: string;
  invitee: string;
  role: Generated<EventInviteRole>;
  status: Generated<EventInviteStatus>;
  created_by: string;
  created_at: DefaultTimestamp;
}

export interface EventEmailInvitesTable {
  event_id: string;
  /** Lower-cased. */
  email: string;
  role: Generated<EmailInviteRole>;
  /** The room invite code mailed to an external address. */
  room_invite_code: string | null;
  created_by: string;
  created_at: DefaultTimestamp;
}

export interface EventFavoritesTable {
  user_id: string;
  event_id: string;
  created_at: DefaultTimestamp;
}

export interface EmailOutboxTable {
  /** bigint identity, read as number. */
  id: ColumnType<number, never, never>;
  created_at: DefaultTimestamp;
  kind: string;
  /** No foreign key: a cancellation outlives its event. */
  event_id: string | null;
  recipients: string[];
  subject: string;
  text: string;
  /** The iCalendar attachment, if any. */
  ics: string | null;
  attempts: Generated<number>;
  next_attempt_at: DefaultTimestamp;
  sent_at: Timestamp | null;
  last_error: string | null;
}

/** Secrets shared by every instance of a deployment, generated by the first (base64url). */
export interface ServiceSecretsTable {
  name: string;
  value: string;
  created_at: DefaultTimestamp;
}

/** A registered user's group, from the `x_grp` claim of the last login. */
/** Tariffs created with `convene tariffs create` (the configuration's are not stored). */
export interface TariffsTable {
  name: string;
  quotas: ColumnType<Record<string, number>, string, string>;
  disabled_modules: ColumnType<string[], string[] | undefined, string[]>;
  disabled_features: ColumnType<string[], string[] | undefined, string[]>;
  created_at: DefaultTimestamp;
}

export interface UserGroupsTable {
  user_id: string;
  /** 1 to 255 characters. */
  name: string;
}

/** A user's calendar feed: the SHA-256 of its secret token (the token itself is never stored). */
export interface CalendarFeedsTable {
  user_id: string;
  token_hash: string;
  created_at: DefaultTimestamp;
}

/** A webhook subscription; `owner` null: an operator's, for every room and meeting. */
export interface WebhookSubscriptionsTable {
  id: string;
  owner: string | null;
  url: string;
  /** `whsec_<base64>` (Standard Webhooks). */
  secret: string;
  event_types: string[];
  description: string | null;
  consecutive_failures: Generated<number>;
  paused_at: Timestamp | null;
  created_at: DefaultTimestamp;
}

/** One event, as delivered (the JSON body), with the room or meeting it concerns (`room:<id>`, `event:<id>`). */
export interface WebhookMessagesTable {
  /** `msg_<32 hex>`, the `webhook-id`. */
  id: string;
  type: string;
  subject: string;
  body: string;
  /** Set for events decided outside a transaction (signaling): a second enqueue of the same change is dropped. */
  dedupe_key: string | null;
  created_at: DefaultTimestamp;
}

/** One message for one subscription: the outbox and the delivery log. */
export interface WebhookDeliveriesTable {
  /** bigint identity, read as number (shown in the API as a string). */
  id: ColumnType<number, never, never>;
  message_id: string;
  subscription_id: string;
  subject: string;
  attempts: Generated<number>;
  next_attempt_at: DefaultTimestamp;
  delivered_at: Timestamp | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: DefaultTimestamp;
}

export interface DB {
  users: UsersTable;
  rooms: RoomsTable;
  sip_configs: SipConfigsTable;
  room_invites: RoomInvitesTable;
  streaming_targets: StreamingTargetsTable;
  assets: AssetsTable;
  room_bans: RoomBansTable;
  events: EventsTable;
  event_exceptions: EventExceptionsTable;
  event_invites: EventInvitesTable;
  event_email_invites: EventEmailInvitesTable;
  event_favorites: EventFavoritesTable;
  email_outbox: EmailOutboxTable;
  service_secrets: ServiceSecretsTable;
  user_groups: UserGroupsTable;
  tariffs: TariffsTable;
  calendar_feeds: CalendarFeedsTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_messages: WebhookMessagesTable;
  webhook_deliveries: WebhookDeliveriesTable;
}

/**
 * The database, or a transaction on it, as repositories take it: services hold one to hand to their
 * repositories and to open transactions, and name it by this alias instead of importing Kysely.
 */
export type Db = Kysely<DB>;

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type UserPatch = Updateable<UsersTable>;

export type RoomRow = Selectable<RoomsTable>;
export type NewRoomRow = Insertable<RoomsTable>;
export type RoomPatch = Updateable<RoomsTable>;

export type SipConfigRow = Selectable<SipConfigsTable>;
export type NewSipConfigRow = Insertable<SipConfigsTable>;
export type SipConfigPatch = Updateable<SipConfigsTable>;

export type RoomInviteRow = Selectable<RoomInvitesTable>;
export type NewRoomInviteRow = Insertable<RoomInvitesTable>;
export type RoomInvitePatch = Updateable<RoomInvitesTable>;

export type StreamingTargetRow = Selectable<StreamingTargetsTable>;
export type NewStreamingTargetRow = Insertable<StreamingTargetsTable>;
export type StreamingTargetPatch = Updateable<StreamingTargetsTable>;

export type AssetRow = Selectable<AssetsTable>;
export type NewAssetRow = Insertable<AssetsTable>;
export type AssetPatch = Updateable<AssetsTable>;

export type RoomBanRow = Selectable<RoomBansTable>;
export type NewRoomBanRow = Insertable<RoomBansTable>;
export type RoomBanPatch = Updateable<RoomBansTable>;

export type EventRow = Selectable<EventsTable>;
export type NewEventRow = Insertable<EventsTable>;
export type EventPatch = Updateable<EventsTable>;

export type EventExceptionRow = Selectable<EventExceptionsTable>;
export type NewEventExceptionRow = Insertable<EventExceptionsTable>;
export type EventExceptionPatch = Updateable<EventExceptionsTable>;

export type EventInviteRow = Selectable<EventInvitesTable>;
export type NewEventInviteRow = Insertable<EventInvitesTable>;
export type EventInvitePatch = Updateable<EventInvitesTable>;

export type EventEmailInviteRow = Selectable<EventEmailInvitesTable>;
export type NewEventEmailInviteRow = Insertable<EventEmailInvitesTable>;
export type EventEmailInvitePatch = Updateable<EventEmailInvitesTable>;

export type EventFavoriteRow = Selectable<EventFavoritesTable>;
export type NewEventFavoriteRow = Insertable<EventFavoritesTable>;
export type EventFavoritePatch = Updateable<EventFavoritesTable>;

export type EmailOutboxRow = Selectable<EmailOutboxTable>;
export type NewEmailOutboxRow = Insertable<EmailOutboxTable>;
export type EmailOutboxPatch = Updateable<EmailOutboxTable>;

export type WebhookSubscriptionRow = Selectable<WebhookSubscriptionsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
