import type { OperationsByTag } from '../../../generated/operations.js';
import { turnCredentials } from '../../domain/turn/turn-credentials.js';
import type { Handlers } from '../handler-types.js';
import type { Services } from './services.js';

export function turnHandlers({ config, clock }: Services) {
  return {
    // users and guests alike (the caller was authenticated by the contract's security)
    async get_turn_servers() {
      return { status: 200, body: turnCredentials(config.turn, { clock }) };
    },
  } satisfies Handlers<OperationsByTag['turn']>;
}
