/**
 * `convene serve`: the composition root of a running service. Checks the port, builds the instance
 * (database opened and migrated, identity, HTTP and signaling), listens, and drains on SIGTERM or
 * SIGINT (signaling sockets close with 1001 and their participants leave, in-flight requests finish,
 * idle connections close, then the database and its data directory lock).
 *
 * The signal handlers are installed first: a signal that arrives while the instance is still being
 * built (a migration running) lets it finish and then stops it the same way, instead of killing the
 * process with the data directory locked and nothing logged.
 */
import type { Config } from '../config/schema.js';
import { createLogger, standardOutput } from '../logger.js';
import { createConvene, type Convene } from '../server.js';
import { asPortUnavailable, ensurePortAvailable } from './port.js';

/** Resolves once the service listens; the process then lives until a signal stops it (and exits). */
export async function serve(config: Config): Promise<void> {
  const { port, host } = config.http;
  await ensurePortAvailable(port, host); // before ./data is created or anything migrated
  const output = standardOutput();
  const logger = createLogger(config.logging.level, output);

  // eslint-disable-next-line prefer-const -- the signal handler above reads it before it is assigned
  let convene: Convene | undefined;
  let ready = false; // built and listening (or given up listening): a signal stops it at once
  let signalled: string | undefined;
  // pino writes asynchronously: a write still in flight when the process exits is lost (seen in CI:
  // "Convene stopped" missing), and pino's flush() does not wait for it. Ending the stream does.
  const exit = (code: number) => output.end(() => process.exit(code));
  const stop = async () => {
    logger.info({ signal: signalled }, 'shutting down');
    try {
      await convene?.close();
    } catch (err) {
      logger.error({ err }, 'shutdown failed');
      return exit(1);
    }
    logger.info('Convene stopped');
    exit(0);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) return;
    signalled = signal;
    if (ready) void stop(); // else: once it is built and listening (below)
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  convene = await createConvene(config, { logger });
  if (signalled) return stop();
  let address;
  try {
    address = await convene.listen();
  } catch (err) {
    await convene.close();
    throw asPortUnavailable(err, port, host) ?? err;
  }
  ready = true;
  if (signalled) return stop();
  const warm = performance.now();
  void convene.warmUp().then(() => logger.debug({ ms: Math.round(performance.now() - warm) }, 'request validators compiled'));
  logger.info(
    { port: address.port, host: address.address, database: convene.database.dialect },
    `Convene listening on http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
  );
}
