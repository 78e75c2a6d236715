/**
 * What a signaling connection needs to know about its room and its participant, read once when the
 * ticket is redeemed: the room's owner and waiting room, the owner's tariff, the room's event, and
 * who the participant is (role, owner, avatar, groups). Roles (docs/architecture.md §6):
 * the room's creator and event invitees with the moderator role are moderators, other registered
 * users `user`, invite-code guests and call-in participants `guest`.
 */
import { sql, type Kysely } from 'kysely';
import type { EventInfo, Role, Tariff } from '../../generated/signaling/types.js';
import type { DB } from '../db/schema.js';
import { toMeetingDetails } from '../domain/rooms/room-view.js';
import { findMeetingDetails } from '../domain/rooms/rooms.repository.js';
import type { TariffCatalog } from '../domain/tariffs/tariff-catalog.js';
import type { ParticipantIdentity, TicketData } from '../domain/tickets/signaling-store.js';

export type ParticipationKind = 'user' | 'guest' | 'sip';

export interface RoomContext {
  roomId: string;
  ownerId: string;
  waitingRoom: boolean;
  /** The room owner's tariff: its modules and its quotas (participant limit, time limit). */
  tariff: Tariff;
  eventInfo?: EventInfo;
}

/** Who is connecting, as the ticket and the database say. */
export interface ParticipantContext {
  id: string;
  who: ParticipantIdentity;
  kind: ParticipationKind;
  role: Role;
  isRoomOwner: boolean;
  /** Registered users' avatar; guests may bring their own with `join`. */
  avatarUrl?: string;
  /** Registered users' groups (the `x_grp` claim of their last login), for the chat; guests and callers have none. */
  groups?: readonly string[];
  /** The session was started with a resumption token: the participant id is the previous session's. */
  resuming: boolean;
  /** The token this session saves and refreshes, for a later start to resume it. */
  resumption: string;
}

/**
 * The room and participant of a redeemed ticket, or undefined when the room is gone, the user was
 * banned from it or the guest's invite code deactivated. `callIn` is `[call_in]`, for the event's
 * meeting details.
 */
export async function loadRoomContext(
  db: Kysely<DB>,
  tariffs: TariffCatalog,
  ticket: TicketData,
  callIn: { tel?: string; uri?: string } = {},
): Promise<{ room: RoomContext; participant: ParticipantContext } | undefined> {
  const userId = ticket.who.kind === 'user' ? ticket.who.userId : null;
  const inviteCode = ticket.who.kind === 'guest' ? ticket.who.inviteCode : null;
  const row = await db
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
      eb
        .selectFrom('users')
        .select('users.avatar_url')
        .where('users.id', '=', userId)
        .as('user_avatar_url'),
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
      // a ban since the ticket was issued (tickets live 30 s) keeps the user out as the start would
      eb
        .exists(
          eb.selectFrom('room_bans').select('room_bans.user_id').whereRef('room_bans.room_id', '=', 'rooms.id').where('room_bans.user_id', '=', userId),
        )
        .as('banned'),
      // likewise a guest's code deactivated since (a guest's ban, or its owner's withdrawal)
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
    .where('rooms.id', '=', ticket.roomId)
    .executeTakeFirst();
  if (!row) return undefined;

  // as GET /rooms/{room_id}/event answers them: the owner's choice, the same for every participant
  const details = row.event_shows_details ? toMeetingDetails(await findMeetingDetails(db, row.room_id), callIn) : undefined;
  const room: RoomContext = {
    roomId: row.room_id,
    ownerId: row.created_by,
    waitingRoom: row.waiting_room,
    tariff: tariffs.forUser({ tariff_name: row.tariff_name }),
    ...(row.event_id !== null
      ? {
          eventInfo: {
            id: row.event_id,
            room_id: row.room_id,
            title: row.event_title ?? '',
            is_adhoc: row.event_is_adhoc ?? false,
            ...(details ? { meeting_details: details } : {}),
          },
        }
      : {}),
  };
  const isRoomOwner = userId !== null && userId === row.created_by;
  if (row.banned && !isRoomOwner) return undefined;
  if (inviteCode !== null && !row.invite_active) return undefined;
  const role: Role =
    ticket.who.kind !== 'user' ? 'guest' : isRoomOwner || row.invite_role === 'moderator' ? 'moderator' : 'user';
  const participant: ParticipantContext = {
    id: ticket.participantId,
    who: ticket.who,
    kind: ticket.who.kind,
    role,
    isRoomOwner,
    ...(row.user_avatar_url ? { avatarUrl: row.user_avatar_url } : {}),
    ...(userId !== null ? { groups: row.user_groups ?? [] } : {}),
    resuming: ticket.resuming,
    resumption: ticket.resumption,
  };
  return { room, participant };
}
