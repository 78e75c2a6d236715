/**
 * The configuration's shape: one JSON schema (validated by ajv at start, with `useDefaults` filling
 * the defaults) and the `Config` type the rest of the service codes against. The type is written out
 * for readers and checked against the schema at compile time (`SchemaMatchesConfig` below), so the
 * two cannot drift apart.
 *
 * Every object is closed (`additionalProperties: false`): an unknown key is a typo, and a typo must
 * stop the service instead of being ignored. A key with a `default` is always present after loading;
 * a key without one is optional.
 */
import { RESUMPTION_REFRESH_SECONDS, RESUMPTION_TTL_SECONDS } from '../domain/tickets/signaling-store.js';
import { MAX_PROXY_HOPS, type TrustProxy } from './trust-proxy.js';

export interface TariffDefinition {
  /** Quota name → value, e.g. `max_storage` (bytes), `room_participant_limit`, `room_time_limit_secs`. */
  quotas: Record<string, number>;
  /** Signaling module namespaces this tariff switches off. */
  disabled_modules: string[];
  /** Features switched off, as `<module>::<feature>`. */
  disabled_features: string[];
}

export interface TurnServer {
  uris: string[];
  /** The TURN server's static-auth-secret (TURN REST API credentials). */
  shared_secret: string;
}

export interface Config {
  http: {
    host: string;
    port: number;
    public_url?: string;
    body_limit_bytes: number;
    /** Which proxies may name the client's address in X-Forwarded-For (trust-proxy.ts); false: none. */
    trust_proxy: TrustProxy;
    /** Signs page cursors (GET /events, instances). Absent: a key generated once and kept in the database. */
    cursor_secret?: string;
  };
  database: { url?: string; data_dir: string; in_memory: boolean; max_connections: number; query_timeout_ms: number };
  redis: { url?: string; command_timeout_ms: number };
  oidc: {
    issuer?: string;
    client_id: string;
    /**
     * Whom an access token must be meant for: its `aud` holds one of `audiences`, or its authorized
     * party (`azp`, else RFC 9068's `client_id`) is one of `authorized_parties`. Neither set: the
     * client id, in either. One set: only what is set.
     */
    audiences?: string[];
    authorized_parties?: string[];
    service_roles_claim: string;
    call_in_role: string;
    provider_name: string;
    admin_api_url?: string;
    admin_client_id?: string;
    admin_client_secret?: string;
    /** Token endpoint for the admin client; default `<issuer>/protocol/openid-connect/token` (Keycloak). */
    admin_token_url?: string;
  };
  /** The embedded development identity provider; only when no issuer is set and NODE_ENV !== 'production'. */
  dev: { identity_provider: boolean };
  call_in: { tel?: string; uri?: string };
  turn: { lifetime: number; servers: TurnServer[] };
  /**
   * Audio and video through Janus (its videoroom plugin, over its WebSocket API). `janus_urls`
   * empty: the media module is off and no tariff offers `media`. With several servers, each room is
   * put on one (the least busy one reachable) and stays there while it has media. Every instance
   * keeps one Janus session per server, kept alive every `keepalive_interval_ms`; a request Janus
   * does not answer within `request_timeout_ms` fails. Publishers are capped at `max_video_bitrate`
   * (camera) and `max_screen_bitrate` (screen) bits per second. `screen_share_requires_permission`:
   * only moderators and participants a moderator made presenter may share their screen.
   */
  media: {
    janus_urls: string[];
    keepalive_interval_ms: number;
    request_timeout_ms: number;
    max_video_bitrate: number;
    max_screen_bitrate: number;
    screen_share_requires_permission: boolean;
  };
  endpoints: {
    disable_users_find: boolean;
    users_find_use_kc: boolean;
    event_invite_external_email_address: boolean;
    disallow_custom_display_name: boolean;
  };
  tariffs: { default: string; claim?: string; definitions: Record<string, TariffDefinition> };
  /**
   * The `/signaling` WebSocket: accepted subprotocols; frames over `max_frame_bytes` close the socket
   * (1009), frames over `max_message_bytes` are refused with an error; ping every `ping_interval_ms`,
   * drop after `pong_timeout_ms` (longer than the interval) without a pong; a live session refreshes
   * its resumption record every `resumption_refresh_ms`.
   */
  signaling: {
    protocols: string[];
    max_frame_bytes: number;
    max_message_bytes: number;
    ping_interval_ms: number;
    pong_timeout_ms: number;
    resumption_refresh_ms: number;
    /** With Redis: this instance's liveness key lives `instance_ttl_ms`, refreshed every `instance_refresh_ms` (at most half). */
    instance_ttl_ms: number;
    instance_refresh_ms: number;
    /** With Redis: how often the rooms this instance hosts are swept of the participants of dead instances. */
    crash_sweep_interval_ms: number;
  };
  /** `["*"]` allows any origin. */
  cors: { origins: string[] };
  /** `access_log`: one line per request at `info` (off: at `debug`, as before). */
  logging: { level: string; access_log: boolean };
  /**
   * Who may read `/metrics` on the API port: the socket peers (never X-Forwarded-For) in these
   * addresses or networks, or Express's names (`loopback`, `linklocal`, `uniquelocal`); `[]` closes it.
   */
  metrics: { allow: string[] };
  users: { default_language: string; avatar_base_url: string; find_limit: number };
  /** Uploaded room assets; `dir` defaults to `<database.data_dir>/assets`. */
  assets: { max_upload_bytes: number; dir?: string };
  /** Outgoing e-mail; without `url` the outbox is kept and nothing is sent. */
  smtp: { url?: string; from: string };
  /**
   * Users' calendar feeds: the events with an occurrence ending at most `past_days` ago or later,
   * at most `max_events` of them.
   */
  calendar_feed: { past_days: number; max_events: number };
  /** Failed guesses of room passwords, invite codes and call-in pins, counted per window. */
  rate_limits: { window_seconds: number; failures_per_source: number; failures_per_target: number };
  /**
   * Caps on signaling entry per registered user, invite code and source address (call-in gateways
   * are exempt): tickets issued per `tickets_window_seconds`, and sockets open at once (across all
   * instances with Redis).
   */
  signaling_caps: {
    tickets_window_seconds: number;
    tickets_per_user: number;
    tickets_per_invite_code: number;
    tickets_per_source: number;
    sockets_per_user: number;
    sockets_per_invite_code: number;
    sockets_per_source: number;
  };
  /**
   * Outgoing webhooks (docs in the README): `https` targets on public addresses only, unless
   * `allow_http` / `allow_private` (tests, closed networks); each attempt gives up after
   * `timeout_ms`; an instance sends at most `concurrency` at once, polling the outbox every
   * `poll_interval_ms`; a failed attempt waits `retry_base_ms`, doubling (at most an hour); after
   * `pause_after_failures` failures in a row a subscription is paused. Delivered deliveries (and the
   * messages left without any) are deleted `retention_days` after delivery.
   */
  webhooks: {
    allow_http: boolean;
    allow_private: boolean;
    max_subscriptions_per_user: number;
    timeout_ms: number;
    concurrency: number;
    poll_interval_ms: number;
    retry_base_ms: number;
    pause_after_failures: number;
    retention_days: number;
  };
}

/** An object section: closed, and present (`{}`, then filled with its defaults) even when not configured. */
function section<const P extends Record<string, object>>(properties: P) {
  return { type: 'object', additionalProperties: false, default: {}, properties } as const;
}

const tariffDefinitionSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    quotas: {
      type: 'object',
      // the interface's unsigned 32-bit quota values
      additionalProperties: { type: 'integer', minimum: 0, maximum: 4294967295 },
      default: {},
    },
    disabled_modules: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
    disabled_features: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
  },
} as const;

const DEFAULT_SIGNALING_PROTOCOLS = ['service-signaling-json-v1.0', 'opentalk-signaling-json-v1.0', 'k3k-signaling-json-v1.0'] as const;

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    http: section({
      host: { type: 'string', minLength: 1, default: '0.0.0.0' },
      // 0 lets the operating system pick a free port (tests)
      port: { type: 'integer', minimum: 0, maximum: 65535, default: 11311 },
      public_url: { type: 'string', format: 'uri' },
      body_limit_bytes: { type: 'integer', minimum: 1, default: 1048576 },
      // false, a hop count or proxy addresses; `true` is refused with its own message (load.ts)
      trust_proxy: {
        anyOf: [
          { const: false },
          { type: 'integer', minimum: 0, maximum: MAX_PROXY_HOPS },
          { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
        ],
        default: false,
      },
      cursor_secret: { type: 'string', minLength: 32 },
    }),
    database: section({
      url: { type: 'string', minLength: 1 },
      data_dir: { type: 'string', minLength: 1, default: './data' },
      in_memory: { type: 'boolean', default: false },
      max_connections: { type: 'integer', minimum: 1, maximum: 1000, default: 10 },
      query_timeout_ms: { type: 'integer', minimum: 100, maximum: 600000, default: 15000 },
    }),
    redis: section({
      url: { type: 'string', minLength: 1 },
      command_timeout_ms: { type: 'integer', minimum: 100, maximum: 600000, default: 5000 },
    }),
    oidc: section({
      issuer: { type: 'string', format: 'uri' },
      client_id: { type: 'string', minLength: 1, default: 'convene' },
      audiences: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
      authorized_parties: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
      service_roles_claim: { type: 'string', minLength: 1, default: 'realm_access.roles' },
      call_in_role: { type: 'string', minLength: 1, default: 'call-in' },
      provider_name: { type: 'string', minLength: 1, default: 'default' },
      admin_api_url: { type: 'string', format: 'uri' },
      admin_client_id: { type: 'string', minLength: 1 },
      admin_client_secret: { type: 'string', minLength: 1 },
      admin_token_url: { type: 'string', format: 'uri' },
    }),
    dev: section({
      identity_provider: { type: 'boolean', default: true },
    }),
    call_in: section({
      tel: { type: 'string', minLength: 1 },
      uri: { type: 'string', minLength: 1 },
    }),
    turn: section({
      lifetime: { type: 'integer', minimum: 1, default: 86400 },
      servers: {
        type: 'array',
        default: [],
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['uris', 'shared_secret'],
          properties: {
            uris: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
            shared_secret: { type: 'string', minLength: 1 },
          },
        },
      },
    }),
    media: section({
      janus_urls: { type: 'array', maxItems: 64, items: { type: 'string', pattern: '^wss?://', minLength: 6 }, default: [] },
      // Janus drops a session after 60 s without a request (its default session_timeout)
      keepalive_interval_ms: { type: 'integer', minimum: 100, maximum: 50000, default: 10000 },
      request_timeout_ms: { type: 'integer', minimum: 100, maximum: 120000, default: 10000 },
      max_video_bitrate: { type: 'integer', minimum: 1, maximum: 100000000, default: 1500000 },
      max_screen_bitrate: { type: 'integer', minimum: 1, maximum: 100000000, default: 8000000 },
      screen_share_requires_permission: { type: 'boolean', default: false },
    }),
    endpoints: section({
      disable_users_find: { type: 'boolean', default: false },
      users_find_use_kc: { type: 'boolean', default: false },
      event_invite_external_email_address: { type: 'boolean', default: false },
      disallow_custom_display_name: { type: 'boolean', default: false },
    }),
    tariffs: section({
      default: { type: 'string', minLength: 1, default: 'default' },
      claim: { type: 'string', minLength: 1 },
      definitions: {
        type: 'object',
        additionalProperties: tariffDefinitionSchema,
        default: { default: { quotas: {}, disabled_modules: [], disabled_features: [] } },
      },
    }),
    signaling: section({
      protocols: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 }, default: DEFAULT_SIGNALING_PROTOCOLS },
      // a join frame must fit: 1 KiB at the least
      max_frame_bytes: { type: 'integer', minimum: 1024, default: 1048576 },
      max_message_bytes: { type: 'integer', minimum: 1024, default: 65536 },
      ping_interval_ms: { type: 'integer', minimum: 100, default: 15000 },
      pong_timeout_ms: { type: 'integer', minimum: 100, default: 20000 },
      // at most half the record's lifetime, so that one late refresh does not let a live session's token expire
      resumption_refresh_ms: {
        type: 'integer',
        minimum: 100,
        maximum: (RESUMPTION_TTL_SECONDS * 1000) / 2,
        default: RESUMPTION_REFRESH_SECONDS * 1000,
      },
      // crash cleanup (src/redis/instance-liveness.ts): a dead instance's participants leave within ttl + sweep interval
      instance_ttl_ms: { type: 'integer', minimum: 200, default: 15000 },
      instance_refresh_ms: { type: 'integer', minimum: 100, default: 5000 },
      crash_sweep_interval_ms: { type: 'integer', minimum: 100, default: 5000 },
    }),
    cors: section({
      origins: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 }, default: ['*'] },
    }),
    logging: section({
      level: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
      access_log: { type: 'boolean', default: true },
    }),
    metrics: section({
      allow: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 }, maxItems: 100, default: ['loopback'] },
    }),
    users: section({
      default_language: { type: 'string', minLength: 1, maxLength: 35, default: 'en-US' },
      avatar_base_url: { type: 'string', format: 'uri', default: 'https://seccdn.libravatar.org/avatar/' },
      find_limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    }),
    assets: section({
      max_upload_bytes: { type: 'integer', minimum: 1, default: 104857600 },
      dir: { type: 'string', minLength: 1 },
    }),
    smtp: section({
      url: { type: 'string', minLength: 1 },
      from: { type: 'string', minLength: 1, default: 'Convene <convene@localhost>' },
    }),
    calendar_feed: section({
      past_days: { type: 'integer', minimum: 0, maximum: 3660, default: 90 },
      max_events: { type: 'integer', minimum: 1, maximum: 10000, default: 500 },
    }),
    rate_limits: section({
      window_seconds: { type: 'integer', minimum: 1, maximum: 86400, default: 300 },
      failures_per_source: { type: 'integer', minimum: 1, default: 10 },
      failures_per_target: { type: 'integer', minimum: 1, default: 50 },
    }),
    signaling_caps: section({
      tickets_window_seconds: { type: 'integer', minimum: 1, maximum: 86400, default: 60 },
      tickets_per_user: { type: 'integer', minimum: 1, default: 60 },
      tickets_per_invite_code: { type: 'integer', minimum: 1, default: 200 },
      tickets_per_source: { type: 'integer', minimum: 1, default: 500 },
      sockets_per_user: { type: 'integer', minimum: 1, default: 50 },
      sockets_per_invite_code: { type: 'integer', minimum: 1, default: 100 },
      sockets_per_source: { type: 'integer', minimum: 1, default: 500 },
    }),
    webhooks: section({
      allow_http: { type: 'boolean', default: false },
      allow_private: { type: 'boolean', default: false },
      max_subscriptions_per_user: { type: 'integer', minimum: 0, maximum: 1000, default: 10 },
      timeout_ms: { type: 'integer', minimum: 100, maximum: 60000, default: 10000 },
      concurrency: { type: 'integer', minimum: 1, maximum: 256, default: 8 },
      poll_interval_ms: { type: 'integer', minimum: 10, maximum: 60000, default: 1000 },
      retry_base_ms: { type: 'integer', minimum: 10, maximum: 3600000, default: 10000 },
      pause_after_failures: { type: 'integer', minimum: 1, maximum: 1000, default: 10 },
      retention_days: { type: 'integer', minimum: 1, maximum: 3660, default: 30 },
    }),
  },
} as const;

// ---- compile-time check that the schema describes exactly `Config` ----

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type IsRequired<S, K> = S extends { required: readonly (infer R)[] } ? (K extends R ? true : false) : false;
type ObjectFrom<S, P> = Simplify<
  { -readonly [K in keyof P as IsRequired<S, K> extends true ? K : P[K] extends { default: unknown } ? K : never]: FromSchema<P[K]> } & {
    -readonly [K in keyof P as IsRequired<S, K> extends true ? never : P[K] extends { default: unknown } ? never : K]?: FromSchema<P[K]>;
  }
>;
/** The value type a (defaults-applied) schema admits, for the keywords this file uses. */
type FromSchema<S> = S extends { anyOf: readonly (infer U)[] }
  ? FromSchema<U>
  : S extends { const: infer C }
    ? C
    : S extends { type: 'string' }
      ? string
      : S extends { type: 'integer' | 'number' }
        ? number
        : S extends { type: 'boolean' }
          ? boolean
          : S extends { type: 'array'; items: infer I }
            ? FromSchema<I>[]
            : S extends { type: 'object'; properties: infer P }
              ? ObjectFrom<S, P>
              : S extends { type: 'object'; additionalProperties: infer A extends object }
                ? Record<string, FromSchema<A>>
                : never;
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the two generic signatures are the idiom that compares types exactly
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type DeepNormalize<T> = T extends (infer E)[] ? DeepNormalize<E>[] : T extends object ? { [K in keyof T]: DeepNormalize<T[K]> } : T;

type Assert<T extends true> = T;

/** Fails to compile when `Config` and `configSchema` disagree on any key, type or optionality. */
export type SchemaMatchesConfig = Assert<Equals<DeepNormalize<Config>, DeepNormalize<FromSchema<typeof configSchema>>>>;
