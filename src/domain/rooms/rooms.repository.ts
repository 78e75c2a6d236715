/**
 * Rooms' rows: insert, the caller's accessible rooms (owned, or reached through an event invite),
 * update, delete, and what a room's tariff and event info are read from.
 */
import { sql, type Kysely } from 'kysely';
import { countAndPage } from '../../db/paging.js';
import { columnsOf, preparedQuery } from '../../db/prepared.js';
import type { DB, EventRow, NewRoomRow, RoomPatch, RoomRow } from '../../db/schema.js';
import type { PageRequest } from '../paging.js';
import { notBannedFrom } from './room-bans.repository.js';

type Db = Kysely<DB>;

export async function insertRoom(db: Db, values: NewRoomRow): Promise<RoomRow> {
  return db.insertInto('rooms').values(values).returningAll().executeTakeFirstOrThrow();
}

/** Rooms the user created, plus the rooms of events the user is invited to (any invite status) and not banned from. */
function accessibleRooms(db: Db, userId: string) {
  return db.selectFrom('rooms').where((eb) =>
    eb.or([
      eb('rooms.created_by', '=', userId),
      eb(
        'rooms.id',
        'in',
        eb
          .selectFrom('events')
          .innerJoin('event_invites', 'event_invites.event_id', 'events.id')
          .select('events.room_id')
          .where('event_invites.invitee', '=', userId)
          .where(notBannedFrom(sql.ref('events.room_id'), userId)),
      ),
    ]),
  );
}

/** Newest first; the id breaks ties so that pages never overlap or skip a room. */
export async function listAccessibleRooms(db: Db, userId: string, request: PageRequest): Promise<{ total: number; rows: RoomRow[] }> {
  const rooms = accessibleRooms(db, userId);
  return countAndPage(rooms, rooms.selectAll('rooms').orderBy('rooms.created_at', 'desc').orderBy('rooms.id', 'desc'), request);
}

export async function updateRoom(db: Db, roomId: string, patch: RoomPatch): Promise<RoomRow | undefined> {
  return db.updateTable('rooms').set(patch).where('id', '=', roomId).returningAll().executeTakeFirst();
}

/**
 * Deletes the room; its event, invites, SIP config, streaming targets, assets and bans go with it
 * (ON DELETE CASCADE). Answers the storage keys of the room's assets, whose bytes live outside the
 * database and must be removed once the deletion has committed. Run it in a transaction.
 */
export async function deleteRoomReturningAssetKeys(db: Db, roomId: string): Promise<{ deleted: boolean; assetKeys: string[] }> {
  // The row lock waits for uploads in flight (their foreign key holds a share lock on the room) and
  // holds off new ones, so the keys read next are all the keys the cascade will delete.
  const room = await db.selectFrom('rooms').select('id').where('id', '=', roomId).forUpdate().executeTakeFirst();
  if (!room) return { deleted: false, assetKeys: [] };
  const assets = await db.selectFrom('assets').select('storage_key').where('room_id', '=', roomId).execute();
  await db.deleteFrom('rooms').where('id', '=', roomId).execute();
  return { deleted: true, assetKeys: assets.map((asset) => asset.storage_key) };
}

/** The tariff name of the room's creator (null: the default tariff); undefined when the room does not exist. */
export async function findCreatorTariffName(db: Db, roomId: string): Promise<{ tariff_name: string | null } | undefined> {
  return db
    .selectFrom('rooms')
    .innerJoin('users', 'users.id', 'rooms.created_by')
    .select('users.tariff_name')
    .where('rooms.id', '=', roomId)
    .executeTakeFirst();
}

export type RoomEventRow = Pick<EventRow, 'id' | 'room_id' | 'title' | 'is_adhoc' | 'show_meeting_details'>;

export async function findRoomEvent(db: Db, roomId: string): Promise<RoomEventRow | undefined> {
  return db.selectFrom('events').select(['id', 'room_id', 'title', 'is_adhoc', 'show_meeting_details']).where('room_id', '=', roomId).executeTakeFirst();
}

/** What a room's meeting details are made of (reference: the room's first valid invite, SIP config, stream links). */
export interface MeetingDetailsRows {
  inviteCode?: string;
  sip?: { sip_id: string; password: string };
  streams: { name: string; public_url: string }[];
}

export async function findMeetingDetails(db: Db, roomId: string): Promise<MeetingDetailsRows> {
  const [invite, sip, streams] = await Promise.all([
    db
      .selectFrom('room_invites')
      .select('code')
      .where('room_id', '=', roomId)
      .where('active', '=', true)
      .where((eb) => eb.or([eb('expiration', 'is', null), eb('expiration', '>', sql<Date>`now()`)]))
      .orderBy('created_at')
      .orderBy('code')
      .limit(1)
      .executeTakeFirst(),
    db.selectFrom('sip_configs').select(['sip_id', 'password']).where('room_id', '=', roomId).executeTakeFirst(),
    db.selectFrom('streaming_targets').select(['name', 'public_url']).where('room_id', '=', roomId).orderBy('created_at').orderBy('id').execute(),
  ]);
  return { inviteCode: invite?.code, sip, streams };
}

const ROOM_COLUMNS = columnsOf<RoomRow>({ id: true, created_by: true, created_at: true, password: true, waiting_room: true });

/** The room with the caller's role as an invitee of its event (null if none or banned): the hot query of every room operation. */
const roomAccessQuery = preparedQuery(['userId', 'roomId'], (db, { userId, roomId }: { userId: string; roomId: string }) =>
  db
    .selectFrom('rooms')
    .select(ROOM_COLUMNS.map((column) => `rooms.${column}` as const))
    .select((eb) =>
      eb
        .selectFrom('events')
        .innerJoin('event_invites', 'event_invites.event_id', 'events.id')
        .select('event_invites.role')
        .whereRef('events.room_id', '=', 'rooms.id')
        .where('event_invites.invitee', '=', userId)
        .where(notBannedFrom(sql.ref('rooms.id'), userId))
        .limit(1)
        .as('invite_role'),
    )
    .where('rooms.id', '=', roomId),
);

/** The room and the caller's role as an invitee of its event (null if none or banned); undefined when there is no room. */
export async function findRoomWithInviteRole(db: Db, userId: string, roomId: string) {
  return roomAccessQuery.takeFirst(db, { userId, roomId });
}
