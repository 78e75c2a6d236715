/**
 * The SIP operations (the contract SIP, §3): read, create-or-modify and delete a room's
 * dial-in configuration. Only the room's owner may do any of them (the pin is a secret); anyone
 * else gets 404, as does a room without a configuration on read and delete.
 */
import type { components } from '../../../generated/openapi.js';
import type { Db, SipConfigRow } from '../../db/schema.js';
import { errors } from '../../errors.js';
import { requireRoomOwner } from '../rooms/room-access.js';
import { createSipConfig, deleteSipConfig, findSipConfig, lockRoom, updateSipConfig } from './sip-configs.repository.js';

export type SipConfig = components['schemas']['SipConfig'];
export type SipConfigPut = components['schemas']['SipConfigPut'];

export interface SipService {
  get(userId: string, roomId: string): Promise<SipConfig>;
  /** Creates the room's config (`created`) or changes the given fields of the existing one. */
  put(userId: string, roomId: string, input: SipConfigPut): Promise<{ created: boolean; config: SipConfig }>;
  delete(userId: string, roomId: string): Promise<void>;
}

function toSipConfig(row: SipConfigRow): SipConfig {
  return { room: row.room_id, sip_id: row.sip_id, password: row.password, lobby: row.lobby };
}

export function createSipService({ db }: { db: Db }): SipService {
  return {
    async get(userId, roomId) {
      await requireRoomOwner(db, userId, roomId);
      const row = await findSipConfig(db, roomId);
      if (!row) throw errors.notFound('The room has no SIP configuration');
      return toSipConfig(row);
    },

    async put(userId, roomId, input) {
      await requireRoomOwner(db, userId, roomId);
      const changes: { password?: string; lobby?: boolean } = {};
      if (input.password !== undefined) changes.password = input.password;
      if (input.lobby !== undefined) changes.lobby = input.lobby;
      return db.transaction().execute(async (trx) => {
        // Locking the room serialises concurrent PUTs of one room: exactly one of them creates.
        const room = await lockRoom(trx, roomId);
        if (!room) throw errors.notFound(); // deleted since the access check
        const updated = await updateSipConfig(trx, roomId, changes);
        if (updated) return { created: false, config: toSipConfig(updated) };
        return { created: true, config: toSipConfig(await createSipConfig(trx, roomId, changes)) };
      });
    },

    async delete(userId, roomId) {
      await requireRoomOwner(db, userId, roomId);
      if (!(await deleteSipConfig(db, roomId))) throw errors.notFound('The room has no SIP configuration');
    },
  };
}
