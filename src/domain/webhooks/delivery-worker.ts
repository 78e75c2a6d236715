/**
 * Sends the webhook outbox (`webhook_deliveries`), off the request path: requests and signaling
 * only insert rows; this worker looks for due ones every `poll_interval_ms` and its `concurrency`
 * lanes POST them.
 *
 * Claiming is the mail worker's (mail-worker.ts): one statement moves a due row's `next_attempt_at`
 * a lease ahead, choosing it `FOR UPDATE SKIP LOCKED`, so that of several instances exactly one
 * sends each attempt, and no transaction stays open during the HTTP call. A process that dies while
 * sending leaves the row to come due again when the lease ends (at least once). An attempt's result
 * that cannot be written (the database away) is written again while the lease holds. A delivery is
 * claimable only when no earlier one of the same subscription and subject (room or meeting) is
 * still pending, so a receiver sees each room's and meeting's events in order.
 *
 * A slow receiver costs one of `concurrency` lanes (one attempt per subscription at a time) for at
 * most `timeout_ms`; it never blocks a request or a socket. A failed attempt waits `retry_base_ms`,
 * doubling up to an hour; after `pause_after_failures` failures in a row the subscription is
 * paused (its deliveries wait for `resume`).
 *
 * Every `pruneIntervalMs` (and at start) it deletes the delivery log's old rows: deliveries
 * delivered more than `retention_days` ago, then the messages older than that which no delivery
 * refers to any more. Every instance does so; the deletes are idempotent, so two at once only
 * repeat each other's work.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../../config/schema.js';
import type { Db } from '../../db/schema.js';
import type { Logger } from '../../logger.js';
import { signature } from './signature.js';
import { guardedLookup, refuseLiteral } from './target-address.js';
import * as repository from './webhooks.repository.js';

export interface WebhookWorker {
  start(): void;
  /** Stops polling and waits for the attempts under way. */
  stop(): Promise<void>;
}

export interface WebhookWorkerOptions {
  db: Db;
  config: Config['webhooks'];
  logger: Logger;
  now?: () => Date;
  /** How often old rows are pruned (PRUNE_INTERVAL_MS). */
  pruneIntervalMs?: number;
}

export const PRUNE_INTERVAL_MS = 3_600_000;
const DAY_MS = 86_400_000;

const RETRY_CAP_MS = 3_600_000;
const MAX_ERROR_LENGTH = 500;
/** Recording an attempt's result again while the database is away: 100 ms doubling up to 2 s, stopping 1 s short of the lease's end. */
const RECORD_RETRY_BASE_MS = 100;
const RECORD_RETRY_MAX_MS = 2_000;
const RECORD_MARGIN_MS = 1_000;

export function webhookRetryDelayMs(baseMs: number, attempts: number): number {
  return Math.min(baseMs * 2 ** Math.max(0, attempts - 1), RETRY_CAP_MS);
}

export function createWebhookWorker({ db, config, logger, now = () => new Date(), pruneIntervalMs = PRUNE_INTERVAL_MS }: WebhookWorkerOptions): WebhookWorker {
  // longer than an attempt may take (timeout_ms) with room for its writes, so a lease never ends
  // while its attempt is under way; short enough that an instance's crash delays little
  const leaseMs = 2 * config.timeout_ms + 5_000;
  let stopping = false;
  const stopped = new AbortController();

  /**
   * The subscriptions this instance is sending to now: one attempt per subscription at a time, so
   * that a slow receiver holds one lane, not all of them.
   */
  const inFlight = new Set<string>();

  async function claim(): Promise<repository.ClaimedDelivery | undefined> {
    const at = now();
    return repository.claimDelivery(db, at, new Date(at.getTime() + leaseMs), [...inFlight]);
  }

  async function anythingClaimable(): Promise<boolean> {
    return repository.anythingClaimable(db, now(), [...inFlight]);
  }

  async function succeeded(row: repository.ClaimedDelivery, status: number): Promise<void> {
    await repository.markDelivered(db, row, status, now());
  }

  async function failed(row: repository.ClaimedDelivery, status: number | undefined, reason: string): Promise<void> {
    const attempts = row.attempts + 1;
    const at = now();
    const failure = {
      attempts,
      last_status_code: status ?? null,
      last_error: reason.slice(0, MAX_ERROR_LENGTH),
      next_attempt_at: new Date(at.getTime() + webhookRetryDelayMs(config.retry_base_ms, attempts)),
    };
    const subscription = await repository.markFailed(db, row, failure, at, config.pause_after_failures);
    if (subscription?.paused_at && subscription.consecutive_failures === config.pause_after_failures) {
      logger.warn({ subscriptionId: row.subscription_id }, 'a webhook subscription failed too often in a row and is paused');
    }
  }

  /** One attempt: the POST, then its result recorded (held while the lease lasts: see `record`). */
  async function attempt(row: repository.ClaimedDelivery, leaseEndsAt: number): Promise<void> {
    const outcome = await send(row);
    await record(row, outcome, leaseEndsAt);
  }

  type Outcome = { status: number; error?: undefined } | { status?: number; error: string };

  async function send(row: repository.ClaimedDelivery): Promise<Outcome> {
    const timestamp = Math.floor(now().getTime() / 1000);
    try {
      const status = await post(row.url, row.body, {
        'content-type': 'application/json',
        'webhook-id': row.message_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature(row.secret, row.message_id, timestamp, row.body),
      });
      return status >= 200 && status < 300 ? { status } : { status, error: `the receiver answered ${status}` };
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
  }

  /**
   * Writes the attempt's result. The database may be away just then (a receiver that was answered
   * is not the database's answer): the write is tried again while the lease holds, so that a short
   * outage neither sends a delivered message again nor counts it as the receiver's failure. Once
   * the lease is near its end, or the worker stops, it gives up: the delivery comes due again when
   * its lease ends and is sent again (at least once).
   */
  async function record(row: repository.ClaimedDelivery, outcome: Outcome, leaseEndsAt: number): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        if (outcome.error === undefined) await succeeded(row, outcome.status);
        else await failed(row, outcome.status, outcome.error);
        return;
      } catch (err) {
        const waitMs = Math.min(RECORD_RETRY_BASE_MS * 2 ** attempt, RECORD_RETRY_MAX_MS);
        if (stopping || performance.now() + waitMs > leaseEndsAt - RECORD_MARGIN_MS) {
          logger.error({ err, deliveryId: row.id }, 'the result of a webhook delivery could not be recorded; it will be sent again when its lease ends');
          return;
        }
        logger.warn({ err, deliveryId: row.id, attempt, waitMs }, 'recording the result of a webhook delivery failed; trying again');
        await sleep(waitMs, undefined, { signal: stopped.signal, ref: false }).catch(() => undefined);
      }
    }
  }

  /** POSTs one body; answers the status. Redirects are not followed (their target was never checked). */
  function post(target: string, body: string, headers: Record<string, string>): Promise<number> {
    const url = new URL(target);
    refuseLiteral(url, config);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        lookup: guardedLookup(config),
        signal: AbortSignal.timeout(config.timeout_ms),
      });
      req.on('error', (err) => reject(err.name === 'AbortError' ? new Error(`no answer within ${config.timeout_ms} ms`) : err));
      req.on('response', (res) => {
        res.resume(); // the body is not read, only drained (the timeout still bounds it)
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      });
      req.end(body);
    });
  }

  // the lanes claim one at a time: a claim sees the subscriptions taken by the claims before it
  // (concurrent claims on PostgreSQL all picked the same slow subscription's deliveries)
  let claiming: Promise<unknown> = Promise.resolve();
  function claimInTurn(): Promise<repository.ClaimedDelivery | undefined> {
    const claimed = claiming.then(async () => {
      const row = await claim();
      if (row) inFlight.add(row.subscription_id);
      return row;
    });
    claiming = claimed.catch(() => undefined);
    return claimed;
  }

  /** Sends until nothing is due. */
  async function lane(): Promise<void> {
    for (let row = await claimInTurn(); row && !stopping; row = await claimInTurn()) {
      const leaseEndsAt = performance.now() + leaseMs;
      try {
        await attempt(row, leaseEndsAt);
      } finally {
        inFlight.delete(row.subscription_id);
      }
    }
  }

  // A watcher polls for anything to send (one cheap query, not one claim per lane: PGlite has one
  // session) and wakes the lanes; each lane sends until nothing is due, then sleeps until woken. A
  // lane held by a slow receiver holds back nothing else: the watcher keeps waking the others.
  const loops: Promise<void>[] = [];
  let waking = new AbortController();
  const untilWoken = () => sleep(2 ** 31 - 1, undefined, { signal: AbortSignal.any([stopped.signal, waking.signal]), ref: false }).catch(() => undefined);

  async function watch(): Promise<void> {
    while (!stopping) {
      const found = await anythingClaimable().catch((err: unknown) => {
        logger.error({ err }, 'the webhook outbox could not be read; trying again later');
        return false;
      });
      if (found) {
        waking.abort();
        waking = new AbortController();
      }
      await sleep(config.poll_interval_ms, undefined, { signal: stopped.signal, ref: false }).catch(() => undefined);
    }
  }

  async function prune(): Promise<void> {
    const before = new Date(now().getTime() - config.retention_days * DAY_MS);
    const counts = await repository.pruneBefore(db, before);
    if (counts.deliveries + counts.messages > 0) logger.info(counts, 'pruned the webhook delivery log');
  }

  async function pruneEvery(): Promise<void> {
    while (!stopping) {
      await prune().catch((err: unknown) => logger.error({ err }, 'the webhook delivery log could not be pruned; trying again later'));
      await sleep(pruneIntervalMs, undefined, { signal: stopped.signal, ref: false }).catch(() => undefined);
    }
  }

  async function work(): Promise<void> {
    while (!stopping) {
      await lane().catch((err: unknown) => logger.error({ err }, 'the webhook outbox could not be read; trying again later'));
      await untilWoken();
    }
  }

  return {
    start() {
      if (loops.length > 0 || stopping) return;
      loops.push(watch(), pruneEvery());
      for (let i = 0; i < config.concurrency; i++) loops.push(work());
    },
    async stop() {
      stopping = true;
      stopped.abort();
      await Promise.all(loops);
    },
  };
}
