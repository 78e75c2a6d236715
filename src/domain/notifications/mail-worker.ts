/**
 * Sends the e-mail outbox over SMTP (nodemailer), one message at a time.
 *
 * Claiming: one statement moves a due row's `next_attempt_at` a lease ahead, choosing the row with
 * `FOR UPDATE SKIP LOCKED`, so several instances polling the same PostgreSQL never pick the same
 * row, and no transaction stays open while the SMTP server talks (on PGlite, one session, that
 * would stall every request). A process that dies while sending leaves the row to come due again
 * when the lease ends: a message is sent at least once, never lost.
 *
 * Failure: `attempts` grows, `last_error` keeps the reason, and the next attempt waits twice as
 * long as the one before (30 s, 1 min, 2 min … at most an hour). Nothing is ever dropped.
 */
import nodemailer, { type SendMailOptions } from 'nodemailer';
import type { Db, EmailOutboxRow } from '../../db/schema.js';
import type { Logger } from '../../logger.js';
import { claimDueMail, markMailFailed, markMailSent } from './notifications.repository.js';

export interface MailWorker {
  /** Polls the outbox every `pollIntervalMs` until stopped. */
  start(): void;
  /** Sends every message due now (waiting for a drain already under way first); answers how many went out. */
  drain(): Promise<number>;
  /** Stops polling and waits for the message being sent, then closes the SMTP transport. */
  stop(): Promise<void>;
}

/** The part of a nodemailer transport the worker uses (tests may pass a transport of their own). */
export interface MailTransport {
  sendMail(message: SendMailOptions): Promise<unknown>;
  close(): void;
}

export interface MailWorkerOptions {
  db: Db;
  smtp: { url: string; from: string };
  logger: Logger;
  now?: () => Date;
  pollIntervalMs?: number;
  transport?: MailTransport;
  /** Hears of each mail the SMTP server did not take (for the metrics). */
  onFailure?: () => void;
}

const RETRY_BASE_MS = 30_000;
export const RETRY_CAP_MS = 3_600_000;
/** Longer than any send may take (the transport's timeouts below), so a lease never ends mid-send. */
export const LEASE_MS = 10 * 60_000;
const SMTP_TIMEOUT_MS = 60_000;
const MAX_ERROR_LENGTH = 2000;

/** The wait before the next attempt after `attempts` failed ones. */
export function retryDelayMs(attempts: number): number {
  return Math.min(RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1), RETRY_CAP_MS);
}

export function createMailWorker(options: MailWorkerOptions): MailWorker {
  const { db, logger } = options;
  const now = options.now ?? (() => new Date());
  const pollIntervalMs = options.pollIntervalMs ?? 5_000;
  const transport: MailTransport =
    options.transport ??
    nodemailer.createTransport({
      url: options.smtp.url,
      connectionTimeout: SMTP_TIMEOUT_MS,
      greetingTimeout: SMTP_TIMEOUT_MS,
      socketTimeout: SMTP_TIMEOUT_MS,
    });

  let running: Promise<number> = Promise.resolve(0);
  let timer: NodeJS.Timeout | undefined;
  let stopping = false;

  async function claim(): Promise<EmailOutboxRow | undefined> {
    const at = now();
    return claimDueMail(db, at, new Date(at.getTime() + LEASE_MS));
  }

  async function send(row: EmailOutboxRow): Promise<boolean> {
    try {
      await transport.sendMail({
        from: options.smtp.from,
        to: row.recipients,
        subject: row.subject,
        text: row.text,
        ...(row.ics ? { icalEvent: { method: methodOf(row.ics), filename: 'invite.ics', content: row.ics } } : {}),
      });
      await markMailSent(db, row.id, now());
      return true;
    } catch (err) {
      options.onFailure?.();
      const attempts = row.attempts + 1;
      const message = (err instanceof Error ? err.message : String(err)).slice(0, MAX_ERROR_LENGTH);
      logger.warn({ err, outboxId: row.id, attempts }, 'sending a mail failed; it stays in the outbox for a later attempt');
      await markMailFailed(db, row.id, { attempts, last_error: message, next_attempt_at: new Date(now().getTime() + retryDelayMs(attempts)) });
      return false;
    }
  }

  async function drainOnce(): Promise<number> {
    let sent = 0;
    while (!stopping) {
      const row = await claim();
      if (!row) break;
      if (await send(row)) sent++;
    }
    return sent;
  }

  function drain(): Promise<number> {
    running = running.catch(() => 0).then(drainOnce);
    return running;
  }

  function schedule(): void {
    if (stopping) return;
    timer = setTimeout(() => {
      drain()
        .catch((err: unknown) => logger.error({ err }, 'the mail outbox could not be read; trying again later'))
        .finally(schedule);
    }, pollIntervalMs);
    timer.unref();
  }

  return {
    start() {
      if (!timer && !stopping) schedule();
    },
    drain,
    async stop() {
      stopping = true;
      clearTimeout(timer);
      await running.catch(() => 0);
      transport.close();
    },
  };
}

/** The iTIP method of an attachment, for the `method` parameter of its text/calendar part. */
function methodOf(ics: string): string {
  return /^METHOD:([A-Z-]+)\r?$/m.exec(ics)?.[1] ?? 'PUBLISH';
}
