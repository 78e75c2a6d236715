import { sql } from 'kysely';
import type { OperationsByTag } from '../../../generated/operations.js';
import type { Handlers } from '../handler-types.js';
import type { Services } from './services.js';

const PROBE_TIMEOUT_MS = 2_000;

export function healthHandlers({ database }: Services) {
  return {
    async get_health() {
      const up = await Promise.race([
        sql`select 1`.execute(database.db).then(
          () => true,
          () => false,
        ),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), PROBE_TIMEOUT_MS).unref()),
      ]);
      return up
        ? { status: 200, body: { status: 'ok', database: 'up' } }
        : { status: 503, body: { status: 'unavailable', database: 'down' } };
    },
  } satisfies Handlers<OperationsByTag['health']>;
}
