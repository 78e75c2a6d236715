import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * One JSON logger for the process; secrets in headers and bodies never reach the log. It writes to
 * standard output unless given another destination (tests read what it wrote).
 */
/**
 * Standard output as pino writes it by default (asynchronously), held by the caller so that it can
 * end it before exiting: `end(done)` calls back once every line, the one in flight included, is out.
 */
export function standardOutput(): DestinationStream & { end(done: () => void): void } {
  const stream = pino.destination({ dest: 1, sync: false });
  return {
    write: (line: string) => stream.write(line),
    end(done) {
      const timeout = setTimeout(done, 5_000); // a reader that stopped reading must not hold the exit
      stream.once('close', () => {
        clearTimeout(timeout);
        done();
      });
      stream.end();
    },
  };
}

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
