import type { OperationsByTag } from '../../../generated/operations.js';
import { callerUser } from '../auth.js';
import type { Handlers } from '../handler-types.js';
import type { Services } from './services.js';

export function sipHandlers({ sip }: Services) {
  return {
    async get_room_sip_config({ caller, params }) {
      return { status: 200, body: await sip.get(callerUser(caller).id, params.room_id) };
    },

    async put_room_sip_config({ caller, params, body }) {
      const { created, config } = await sip.put(callerUser(caller).id, params.room_id, body);
      return created ? { status: 201, body: config } : { status: 200, body: config };
    },

    async delete_room_sip_config({ caller, params }) {
      await sip.delete(callerUser(caller).id, params.room_id);
      return { status: 204 };
    },
  } satisfies Handlers<OperationsByTag['sip']>;
}
