/**
 * Each request's logger, made when something logs through it: `req.log` and `res.log` bind the
 * request's id, method and URL. The finished request is logged at info (the access log; at debug
 * with `[logging] access_log = false`), a 5xx at error. pino-http
 * did the same but made the child logger for every request, its bindings serialised and redacted
 * even when nothing was logged, which cost a short request about 7% of its CPU (the HTTP benchmark's
 * profile, scripts/bench/RESULTS.md).
 */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger.js';

/** What handlers log through: one object and a message, at one of these levels. */
export class RequestLog {
  private child: Logger | undefined;

  /** `bindings` is called once, when the first line is logged: a request that logs nothing builds none. */
  constructor(
    private readonly logger: Logger,
    private readonly bindings: () => object,
  ) {}

  debug(details: object, message: string): void {
    if (this.logger.isLevelEnabled('debug')) this.get().debug(details, message);
  }

  info(details: object, message: string): void {
    if (this.logger.isLevelEnabled('info')) this.get().info(details, message);
  }

  warn(details: object, message: string): void {
    if (this.logger.isLevelEnabled('warn')) this.get().warn(details, message);
  }

  error(details: object, message: string): void {
    if (this.logger.isLevelEnabled('error')) this.get().error(details, message);
  }

  private get(): Logger {
    return (this.child ??= this.logger.child(this.bindings()));
  }
}

declare module 'node:http' {
  interface IncomingMessage {
    log: RequestLog;
  }
  interface ServerResponse {
    log: RequestLog;
  }
}

/**
 * An invite code is a credential: whoever holds it enters the room as a guest. The owner's
 * operations on one (`/rooms/{id}/invites/{code}`) carry it in the path, so the logged URL masks it.
 */
const INVITE_CODE_IN_PATH = /(\/invites\/)[^/?#]+/gi;
/** A calendar feed's URL is its only credential (`/calendar_feeds/{token}/meetings.ics`): masked alike. */
const FEED_TOKEN_IN_PATH = /(\/calendar_feeds\/)[^/?#]+/gi;

export function loggedUrl(url: string): string {
  return url.replace(INVITE_CODE_IN_PATH, '$1<invite code>').replace(FEED_TOKEN_IN_PATH, '$1<feed token>');
}

export function requestLogger(logger: Logger, { accessLog }: { accessLog: boolean }) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = Date.now();
    // originalUrl, not url: a mounted router rewrites req.url while it runs
    const log = new RequestLog(logger, () => ({ req: { id: res.locals.requestId as string, method: req.method, url: loggedUrl(req.originalUrl) } }));
    req.log = log;
    res.log = log;
    res.once('finish', () => {
      const level = res.statusCode >= 500 ? 'error' : accessLog ? 'info' : 'debug';
      if (!logger.isLevelEnabled(level)) return;
      log[level]({ res: { statusCode: res.statusCode }, responseTime: Date.now() - started }, level === 'error' ? 'request errored' : 'request completed');
    });
    next();
  };
}
