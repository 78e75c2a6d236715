import { pino, type Logger } from 'pino';

export type { Logger };

/** One JSON logger for the process; secrets in headers and bodies never reach the log. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["sec-websocket-protocol"]',
        '*.password',
        '*.id_token',
        '*.ticket',
        '*.resumption',
        '*.pin',
        '*.streaming_key',
      ],
      censor: '[redacted]',
    },
  });
}
