/**
 * The rooms operations (the contract Rooms): list the accessible rooms, create, read, change
 * and delete a room, and read its tariff (its creator's) and its event. Access follows
 * `room-access.ts`: owner or event invitee may read, only the owner may change or delete, anyone
 * else gets 404. A room's tariff and event may also be read by a guest holding an invite code of
 * that very room.
 */
import type { components } from '../../../generated/openapi.js';
import type { Db } from '../../db/schema.js';
import type { AssetStorage } from '../assets/asset-storage.js';
import { errors } from '../../errors.js';
import { createSipConfig } from '../sip/sip-configs.repository.js';
import type { Tariff, TariffCatalog } from '../tariffs/tariff-catalog.js';
import type { Page, PageRequest } from '../paging.js';
import { requireRoomAccess, requireRoomOwner } from './room-access.js';
import { normalizePassword, toMeetingDetails, toRoom, toRoomEventInfo, type Room, type RoomEventInfo } from './room-view.js';
import * as repository from './rooms.repository.js';
import { queueEventWebhook } from '../webhooks/domain-events.js';

/** `waiting_room` has a default in the contract (so its generated type requires it); below HTTP it may be left out. */
export type RoomCreate = Omit<components['schemas']['RoomCreate'], 'waiting_room'> & { waiting_room?: boolean };
export type RoomChanges = components['schemas']['RoomPatch'];

/** Who reads a room's tariff or event: a registered user, or a guest whose invite code is for `roomId`. */
export type RoomReader = { kind: 'user'; userId: string } | { kind: 'guest'; roomId: string };

export interface RoomService {
  listAccessible(userId: string, page: PageRequest): Promise<Page<Room>>;
  create(userId: string, input: RoomCreate): Promise<Room>;
  get(userId: string, roomId: string): Promise<Room>;
  patch(userId: string, roomId: string, changes: RoomChanges): Promise<Room>;
  /**
   * Deletes the room and everything it carries. Answers the storage keys of asset files that could
   * not be removed (the room is gone regardless; the caller logs them for clean-up).
   */
  delete(userId: string, roomId: string): Promise<{ undeletedAssetKeys: string[] }>;
  tariff(reader: RoomReader, roomId: string): Promise<Tariff>;
  eventInfo(reader: RoomReader, roomId: string): Promise<RoomEventInfo>;
}

export interface RoomServiceDeps {
  db: Db;
  tariffs: TariffCatalog;
  /** Where asset bytes live: the database cascade removes only the rows, the files go afterwards. */
  assetStorage: Pick<AssetStorage, 'delete'>;
  /** `[call_in]`: the telephone number (and SIP URI) of meeting details; without `tel` they have no `call_in`. */
  callIn?: { tel?: string; uri?: string };
}

export function createRoomService({ db, tariffs, assetStorage, callIn = {} }: RoomServiceDeps): RoomService {
  /** 404 unless the reader may see the room: a user through room access, a guest only for its own room. */
  async function requireReader(reader: RoomReader, roomId: string): Promise<void> {
    if (reader.kind === 'user') {
      await requireRoomAccess(db, reader.userId, roomId);
    } else if (reader.roomId !== roomId) {
      throw errors.notFound();
    }
  }

  return {
    async listAccessible(userId, page) {
      const { total, rows } = await repository.listAccessibleRooms(db, userId, page);
      return { items: rows.map(toRoom), total };
    },

    async create(userId, input) {
      // one transaction: a room asked to have SIP never exists without its SIP config
      const row = await db.transaction().execute(async (trx) => {
        const room = await repository.insertRoom(trx, {
          created_by: userId,
          password: normalizePassword(input.password),
          waiting_room: input.waiting_room ?? false,
        });
        if (input.enable_sip) await createSipConfig(trx, room.id);
        return room;
      });
      return toRoom(row);
    },

    async get(userId, roomId) {
      return toRoom((await requireRoomAccess(db, userId, roomId)).room);
    },

    async patch(userId, roomId, changes) {
      await requireRoomOwner(db, userId, roomId);
      const patch: { password?: string | null; waiting_room?: boolean } = {};
      if (changes.password !== undefined) patch.password = normalizePassword(changes.password);
      if (changes.waiting_room !== undefined) patch.waiting_room = changes.waiting_room;
      const row = await repository.updateRoom(db, roomId, patch);
      if (!row) throw errors.notFound(); // deleted since the access check
      return toRoom(row);
    },

    async delete(userId, roomId) {
      await requireRoomOwner(db, userId, roomId);
      const { deleted, assetKeys } = await db.transaction().execute(async (trx) => {
        // its meeting goes with it (cascade): cancelled as DELETE /events/{id} reports it, read before the deletion
        const meeting = await repository.findRoomEvent(trx, roomId);
        if (meeting) await queueEventWebhook(trx, 'event.cancelled', meeting.id);
        return repository.deleteRoomReturningAssetKeys(trx, roomId);
      });
      if (!deleted) throw errors.notFound(); // deleted since the access check
      // only after the commit: a rolled-back deletion must not lose files
      const results = await Promise.allSettled(assetKeys.map((key) => assetStorage.delete(key)));
      return { undeletedAssetKeys: assetKeys.filter((_, i) => results[i]!.status === 'rejected') };
    },

    async tariff(reader, roomId) {
      await requireReader(reader, roomId);
      const creator = await repository.findCreatorTariffName(db, roomId);
      if (!creator) throw errors.notFound();
      return tariffs.forUser(creator);
    },

    async eventInfo(reader, roomId) {
      await requireReader(reader, roomId);
      const event = await repository.findRoomEvent(db, roomId);
      if (!event) throw errors.notFound('The room is not used by an event');
      // the owner's choice, for every reader alike (reference: build_event_info)
      if (!event.show_meeting_details) return toRoomEventInfo(event);
      return toRoomEventInfo(event, toMeetingDetails(await repository.findMeetingDetails(db, roomId), callIn));
    },
  };
}
