import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * One JSON logger for the process; secrets in headers and bodies never reach the log. It writes to
 * standard output unless given another destination (tests read what it wrote).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
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
  };
  return destination ? pino(options, destination) : pino(options);
}
