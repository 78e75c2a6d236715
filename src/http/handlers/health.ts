import { sql } from 'kysely';
import type { OperationsByTag } from '../../../generated/operations.js';
import { TimeoutError, within } from '../../domain/within.js';
import { errors, type FieldError } from '../../errors.js';
import { errorBody } from '../errors.js';
import type { Handlers } from '../handler-types.js';
import type { Services } from './services.js';

const PROBE_TIMEOUT_MS = 2_000;

export function healthHandlers({ database, redis }: Services) {
  /** Undefined when the dependency answered; else why not, as an entry of the error body. */
  const probe = async (field: string, what: string, ask: () => Promise<unknown>): Promise<FieldError | undefined> => {
    try {
      await within(ask(), PROBE_TIMEOUT_MS, what);
      return undefined;
    } catch (err) {
      // the reason's kind, not the driver's message: that may name hosts and ports to anyone
      return err instanceof TimeoutError
        ? { field, code: 'timeout', message: err.message }
        : { field, code: 'unavailable', message: `${what} failed` };
    }
  };

  return {
    async get_health() {
      const up = await within(sql`select 1`.execute(database.db), PROBE_TIMEOUT_MS, 'the database').then(
        () => true,
        () => false,
      );
      return up
        ? { status: 200, body: { status: 'ok', database: 'up' } }
        : { status: 503, body: { status: 'unavailable', database: 'down' } };
    },

    async get_ready() {
      const failed = (
        await Promise.all([
          probe('database', 'the database', () => sql`select 1`.execute(database.db)),
          redis ? probe('redis', 'Redis', () => redis.ping()) : undefined,
        ])
      ).filter((entry) => entry !== undefined);
      // answered, not thrown: a load balancer asks every few seconds, and a 503 thrown is logged as an error each time
      if (failed.length > 0) {
        const refusal = errors.serviceUnavailable(`Not ready: ${failed.map((entry) => entry.field).join(' and ')} not answering`, failed);
        return { status: 503, body: errorBody(refusal) } as const;
      }
      return { status: 200, body: { status: 'ready', database: 'up', redis: redis ? 'up' : 'not_configured' } } as const;
    },
  } satisfies Handlers<OperationsByTag['health']>;
}
