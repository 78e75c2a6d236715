/**
 * The composition root: load the configuration, build the instance, listen, and drain on SIGTERM or
 * SIGINT (signaling sockets close with 1001 and their participants leave, in-flight requests finish,
 * idle connections close, then the database).
 */
import { loadConfigOrExit } from './config/load.js';
import { DataDirLockedError } from './db/connect.js';
import { IdentityConfigurationError } from './domain/identity/identity.js';
import { createLogger } from './logger.js';
import { createConvene } from './server.js';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.logging.level);
  const convene = await createConvene(config, { logger });
  const address = await convene.listen();
  const warm = performance.now();
  void convene.warmUp().then(() => logger.debug({ ms: Math.round(performance.now() - warm) }, 'request validators compiled'));
  logger.info(
    { port: address.port, host: address.address, database: convene.database.dialect },
    `Convene listening on http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    convene.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  // a setup the operator must fix: say what, without a stack trace
  if (err instanceof DataDirLockedError || err instanceof IdentityConfigurationError) {
    console.error(`convene: ${err.message}`);
    process.exit(2);
  }
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
