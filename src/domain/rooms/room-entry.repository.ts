/**
 * What the room entry service reads and writes (room-entry.service.ts): in one query, a room with
 * its owner's tariff, its event and what decides a participant's entry (its invitation's role, a
 * ban, its invite code still active); and the writes of a moderator's ban.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { preparedQuery, sharingInFlight } from '../../db/prepared.js';

type Db = Kysely<DB>;

/** Who the entry row is read for: a registered user, an invite-code guest, or neither (a caller). */
export interface EntrantKeys {
  userId: string | null;
  inviteCode: string | null;
}

/**
 * The room, its owner's tariff and event, and the entrant's avatar, groups, invitation role, ban and
 * code. Prepared, and shared in flight: every join reads it, a join storm's guests all for the same
 * room and code.
 */
const roomEntryRow = sharingInFlight(
  preparedQuery(
    ['roomId', 'userId', 'inviteCode'],
    (db, { roomId, userId, inviteCode }: { roomId: string; userId: string | null; inviteCode: string | null }) =>
      db
        .selectFrom('rooms')
        .innerJoin('users as owner', 'owner.id', 'rooms.created_by')
        .leftJoin('events', 'events.room_id', 'rooms.id')
        .select([
          'rooms.id as room_id',
          'rooms.created_by',
          'rooms.waiting_room',
          'owner.tariff_name',
          'events.id as event_id',
          'events.title as event_title',
          'events.is_adhoc as event_is_adhoc',
          'events.show_meeting_details as event_shows_details',
        ])
        .select((eb) => [
          eb.selectFrom('users').select('users.avatar_url').where('users.id', '=', userId).as('user_avatar_url'),
          eb
            .selectFrom('user_groups')
            .select(sql<string[]>`coalesce(array_agg(user_groups.name order by user_groups.name), '{}')`.as('names'))
            .where('user_groups.user_id', '=', userId)
            .as('user_groups'),
          eb
            .selectFrom('event_invites')
            .select('event_invites.role')
            .whereRef('event_invites.event_id', '=', 'events.id')
            .where('event_invites.invitee', '=', userId)
            .as('invite_role'),
          eb
            .exists(
              eb.selectFrom('room_bans').select('room_bans.user_id').whereRef('room_bans.room_id', '=', 'rooms.id').where('room_bans.user_id', '=', userId),
            )
            .as('banned'),
          eb
            .exists(
              eb
                .selectFrom('room_invites')
                .select('room_invites.code')
                .whereRef('room_invites.room_id', '=', 'rooms.id')
                .where('room_invites.code', '=', inviteCode)
                .where('room_invites.active', '=', true),
            )
            .as('invite_active'),
        ])
        .where('rooms.id', '=', roomId),
  ),
  ({ roomId, userId, inviteCode }) => `${roomId} ${userId ?? ''} ${inviteCode ?? ''}`,
);

export async function findRoomEntryRow(db: Db, roomId: string, { userId, inviteCode }: EntrantKeys) {
  return roomEntryRow.takeFirst(db, { roomId, userId, inviteCode });
}

export type RoomEntryRow = NonNullable<Awaited<ReturnType<typeof findRoomEntryRow>>>;

/** Bans the user from the room (again: nothing changes). */
export async function insertRoomBan(db: Db, roomId: string, userId: string, bannedBy: string): Promise<void> {
  await db
    .insertInto('room_bans')
    .values({ room_id: roomId, user_id: userId, created_by: bannedBy })
    .onConflict((conflict) => conflict.columns(['room_id', 'user_id']).doNothing())
    .execute();
}

/** Deactivates the room's invite code (one already inactive stays as it was). */
export async function deactivateInviteCode(db: Db, roomId: string, code: string, revokedBy: string, now: Date): Promise<void> {
  await db
    .updateTable('room_invites')
    .set({ active: false, updated_by: revokedBy, updated_at: now })
    .where('room_id', '=', roomId)
    .where('code', '=', code)
    .where('active', '=', true)
    .execute();
}
