/**
 * Prometheus metrics of one instance, the one registry served at `/metrics`: HTTP requests, the
 * signaling sockets, rooms and participants here, the signaling bus's timings, the database pool,
 * Redis and database errors, and the mail outbox; plus the process defaults.
 *
 * Neutral ground (neither HTTP nor signaling owns it), so that both transports record into it
 * without importing each other. What can be read when scraped is read then, by `collect` callbacks
 * over the sources given to `watch`: the hot paths only increment or observe.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { within } from './domain/within.js';

/** The signaling bus's timings (recorded by bus/timed.ts). */
export interface BusTimings {
  published(seconds: number): void;
  delivered(seconds: number): void;
}

/** What the metrics read at each scrape. */
export interface MetricSources {
  /** Open signaling sockets, rooms with a joined participant here, and the joined participants here. */
  signaling(): { sockets: number; rooms: number; participants: number };
  /** The database pool's connections (pg's totalCount, idleCount, waitingCount). */
  databasePool(): { total: number; idle: number; waiting: number };
  /** Failed queries and failed connection attempts since the database was opened. */
  databaseErrors(): number;
  /** E-mails in the outbox not yet sent. */
  pendingMail(): Promise<number>;
}

export interface Metrics {
  registry: Registry;
  observeRequest(operation: string, method: string, status: number, seconds: number): void;
  bus: BusTimings;
  /** An error event of a Redis connection (refused, reset, …). */
  redisError: () => void;
  /** A mail the SMTP server did not take (it stays in the outbox for a later attempt). */
  mailFailed: () => void;
  /** A webhook event of signaling dropped before it reached the outbox (signaling/webhooks.ts). */
  webhookEventDropped(): void;
  /** Sets what the scrape-time metrics read; until then they answer nothing but zeros. */
  watch(sources: MetricSources): void;
}

/** How long a scrape waits for the outbox count before it reports NaN (a slow database must not hang /metrics). */
export const OUTBOX_COUNT_TIMEOUT_MS = 1_000;

const BUS_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  let sources: MetricSources | undefined;

  const requests = new Counter({
    name: 'convene_http_requests_total',
    help: 'HTTP requests answered, by operationId, method and status',
    labelNames: ['operation', 'method', 'status'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'convene_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by operationId',
    labelNames: ['operation'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers,
  });

  signalingGauges(registers, () => sources);
  databaseMetrics(registers, () => sources);

  const published = new Histogram({
    name: 'convene_signaling_bus_publish_seconds',
    help: 'Time to publish a room message on the signaling bus (to Redis, or queued in process)',
    buckets: BUS_BUCKETS,
    registers,
  });
  const delivered = new Histogram({
    name: 'convene_signaling_bus_delivery_seconds',
    help: 'Time from publishing a room message (on any instance) to its receipt on this one; across instances it includes their clock difference',
    buckets: BUS_BUCKETS,
    registers,
  });
  const redisErrors = new Counter({
    name: 'convene_redis_errors_total',
    help: 'Error events of the Redis connections (refused, reset, reconnect failures)',
    registers,
  });
  const mailFailures = new Counter({
    name: 'convene_mail_failures_total',
    help: 'Mails the SMTP server did not take; each stays in the outbox for a later attempt',
    registers,
  });
  const webhookDrops = new Counter({
    name: 'convene_webhook_events_dropped_total',
    help: 'Webhook events of signaling dropped before they reached the outbox (too many waiting for the database, or left at shutdown)',
    registers,
  });
  new Gauge({
    name: 'convene_mail_outbox_pending',
    help: `E-mails in the outbox not yet sent (NaN when the database did not answer within ${OUTBOX_COUNT_TIMEOUT_MS} ms)`,
    registers,
    async collect() {
      if (!sources) return;
      this.set(await within(sources.pendingMail(), OUTBOX_COUNT_TIMEOUT_MS, 'the outbox count').catch(() => Number.NaN));
    },
  });

  return {
    registry,
    observeRequest(operation, method, status, seconds) {
      requests.inc({ operation, method, status: String(status) });
      duration.observe({ operation }, seconds);
    },
    bus: {
      published: (seconds) => published.observe(seconds),
      delivered: (seconds) => delivered.observe(seconds),
    },
    redisError: () => redisErrors.inc(),
    mailFailed: () => mailFailures.inc(),
    webhookEventDropped: () => webhookDrops.inc(),
    watch(given) {
      sources = given;
    },
  };
}

/** A gauge read at scrape time from one of the sources (none yet: the gauge keeps its last value). */
function sourceGauge<Stats>(registers: Registry[], name: string, help: string, read: () => Stats | undefined, pick: (stats: Stats) => number): void {
  new Gauge({
    name,
    help,
    registers,
    collect() {
      const stats = read();
      if (stats) this.set(pick(stats));
    },
  });
}

function signalingGauges(registers: Registry[], sources: () => MetricSources | undefined): void {
  const gauge = (name: string, help: string, pick: (stats: ReturnType<MetricSources['signaling']>) => number) =>
    sourceGauge(registers, name, help, () => sources()?.signaling(), pick);
  gauge('convene_signaling_sockets_open', 'Signaling WebSockets open on this instance', (s) => s.sockets);
  gauge('convene_signaling_rooms_active', 'Rooms with at least one participant joined on this instance', (s) => s.rooms);
  gauge('convene_signaling_participants', 'Participants joined in a room on this instance (not those connected only, or waiting)', (s) => s.participants);
}

function databaseMetrics(registers: Registry[], sources: () => MetricSources | undefined): void {
  const pool = (name: string, help: string, pick: (stats: ReturnType<MetricSources['databasePool']>) => number) =>
    sourceGauge(registers, name, help, () => sources()?.databasePool(), pick);
  // the embedded database (PGlite) is one session behind a pool of one connection: its figures
  // are as true, `waiting` being the queries queued for that session
  pool('convene_database_pool_connections', 'Connections the database pool holds (busy and idle; embedded: at most 1)', (p) => p.total);
  pool('convene_database_pool_idle_connections', 'Connections of the database pool that are idle', (p) => p.idle);
  pool('convene_database_pool_waiting_queries', 'Queries waiting for a connection of the database pool', (p) => p.waiting);
  let counted = 0;
  new Counter({
    name: 'convene_database_errors_total',
    help: 'Database queries that failed and connections that could not be opened',
    registers,
    collect() {
      // counted by the database as they happen; brought over here at each scrape
      const current = sources()?.databaseErrors() ?? counted;
      if (current <= counted) return;
      this.inc(current - counted);
      counted = current;
    },
  });
}
