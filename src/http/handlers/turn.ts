import type { OperationsByTag } from '../../../generated/operations.js';
import type { Handlers } from '../handler-types.js';
import type { Services } from './services.js';

export function turnHandlers({ turnServers }: Services) {
  return {
    // users and guests alike (the caller was authenticated by the contract's security)
    async get_turn_servers() {
      return { status: 200, body: turnServers() };
    },
  } satisfies Handlers<OperationsByTag['turn']>;
}
