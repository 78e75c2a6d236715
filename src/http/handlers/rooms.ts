import type { OperationsByTag } from '../../../generated/operations.js';
import type { RoomReader } from '../../domain/rooms/rooms.service.js';
import { callerUser, type Caller } from '../auth.js';
import type { Handlers } from '../handler-types.js';
import { pageAnswer, pageQuery } from '../pagination.js';
import type { Services } from './services.js';

/** A room's tariff and event admit a guest with an invite code besides users (docs/decisions.md). */
function roomReader(caller: Caller): RoomReader {
  if (caller.kind === 'guest') return { kind: 'guest', roomId: caller.roomId };
  return { kind: 'user', userId: callerUser(caller).id };
}

export function roomsHandlers({ rooms, publicUrl }: Services) {
  return {
    async get_rooms({ caller, query, req }) {
      const page = pageQuery(query);
      return pageAnswer(req, publicUrl, query, page, await rooms.listAccessible(callerUser(caller).id, page));
    },

    async create_room({ caller, body }) {
      return { status: 201, body: await rooms.create(callerUser(caller).id, body) };
    },

    async get_room({ caller, params }) {
      return { status: 200, body: await rooms.get(callerUser(caller).id, params.room_id) };
    },

    async patch_room({ caller, params, body }) {
      return { status: 200, body: await rooms.patch(callerUser(caller).id, params.room_id, body) };
    },

    async delete_room({ caller, params, req }) {
      const { undeletedAssetKeys } = await rooms.delete(callerUser(caller).id, params.room_id);
      if (undeletedAssetKeys.length > 0) {
        req.log.warn({ roomId: params.room_id, storageKeys: undeletedAssetKeys }, 'asset files of a deleted room remain in storage');
      }
      return { status: 204 };
    },

    async get_room_tariff({ caller, params }) {
      return { status: 200, body: await rooms.tariff(roomReader(caller), params.room_id) };
    },

    async get_room_event({ caller, params }) {
      return { status: 200, body: await rooms.eventInfo(roomReader(caller), params.room_id) };
    },
  } satisfies Handlers<OperationsByTag['rooms']>;
}
