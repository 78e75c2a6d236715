import type { OperationsByTag } from '../../../generated/operations.js';
import { callerUser } from '../auth.js';
import type { Handlers } from '../handler-types.js';
import { pageAnswer, pageQuery } from '../pagination.js';
import type { Services } from './services.js';

export function streamingTargetsHandlers({ streamingTargets: targets, publicUrl }: Services) {
  return {
    async get_room_streaming_targets({ caller, params, query, req }) {
      const page = pageQuery(query);
      return pageAnswer(req, publicUrl, query, page, await targets.list(callerUser(caller).id, params.room_id, page));
    },

    async create_room_streaming_target({ caller, params, body }) {
      return { status: 201, body: await targets.create(callerUser(caller).id, params.room_id, body) };
    },

    async get_room_streaming_target({ caller, params }) {
      return { status: 200, body: await targets.get(callerUser(caller).id, params.room_id, params.streaming_target_id) };
    },

    async patch_room_streaming_target({ caller, params, body }) {
      const target = await targets.patch(callerUser(caller).id, params.room_id, params.streaming_target_id, body);
      return { status: 200, body: target };
    },

    async delete_room_streaming_target({ caller, params }) {
      await targets.delete(callerUser(caller).id, params.room_id, params.streaming_target_id);
      return { status: 204 };
    },
  } satisfies Handlers<OperationsByTag['streaming_targets']>;
}
