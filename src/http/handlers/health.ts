import type { OperationsByTag } from '../../../generated/operations.js';
import { errors } from '../../errors.js';
import { errorBody } from '../errors.js';
import type { Handlers } from '../handler-types.js';
import type { Services } from './services.js';

export function healthHandlers({ health }: Services) {
  return {
    async get_health() {
      return (await health.databaseUp())
        ? { status: 200, body: { status: 'ok', database: 'up' } }
        : { status: 503, body: { status: 'unavailable', database: 'down' } };
    },

    async get_ready() {
      const { failed, redis, media } = await health.readiness();
      // answered, not thrown: a load balancer asks every few seconds, and a 503 thrown is logged as an error each time
      if (failed.length > 0) {
        const refusal = errors.serviceUnavailable(`Not ready: ${failed.map((entry) => entry.field).join(' and ')} not answering`, failed);
        return { status: 503, body: errorBody(refusal) } as const;
      }
      return { status: 200, body: { status: 'ready', database: 'up', redis, media } } as const;
    },
  } satisfies Handlers<OperationsByTag['health']>;
}
