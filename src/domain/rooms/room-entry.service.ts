/**
 * Who may enter a room's meeting, and as what (docs/architecture.md §6), asked by the signaling
 * socket when its ticket is redeemed: the room's creator and its event's invitees with the role
 * `moderator` are moderators (as room-access.ts grants them the room: owner, or invitee with a
 * role), other registered users `user`, invite-code guests and callers `guest`. A ban since the
 * ticket was issued (tickets live 30 s) keeps a user out as the start would (room-bans.ts), and
 * likewise a guest's code deactivated since. Also here: a moderator's ban, of a registered user
 * (`room_bans`) or of a guest (its invite code deactivated, as the owner's withdrawal does).
 */
import type { Db, EventInviteRole } from '../../db/schema.js';
import { findMeetingDetails } from './rooms.repository.js';
import { deactivateInviteCode, findRoomEntryRow, insertRoomBan, type RoomEntryRow } from './room-entry.repository.js';
import { toMeetingDetails, type RoomEventInfo } from './room-view.js';

/** Who enters: a registered user, an invite-code guest or a caller (ids as the ticket has them). */
export type Entrant = { kind: 'user'; userId: string } | { kind: 'guest'; inviteCode: string } | { kind: 'sip' };

export type RoomRole = 'moderator' | 'user' | 'guest';

export interface RoomEntry {
  room: {
    id: string;
    ownerId: string;
    waitingRoom: boolean;
    /** The owner's tariff name (null: the default tariff). */
    ownerTariffName: string | null;
    /** The room's event, with its meeting details when the owner shows them. */
    event?: RoomEventInfo;
  };
  role: RoomRole;
  isRoomOwner: boolean;
  /** A registered user's avatar and groups (the `x_grp` claim of its last login). */
  avatarUrl?: string;
  groups?: readonly string[];
}

export interface RoomEntryService {
  /** The entrant's entry to the room, or undefined when the room is gone, the user banned or the guest's code deactivated. */
  enter(roomId: string, entrant: Entrant): Promise<RoomEntry | undefined>;
  /** Bans the user from the room (again: nothing changes); `bannedBy` is a registered user. */
  ban(roomId: string, userId: string, bannedBy: string): Promise<void>;
  /** Deactivates the room's invite code (one already inactive stays as it was); `revokedBy` as for `ban`. */
  revokeInviteCode(roomId: string, code: string, revokedBy: string, now: Date): Promise<void>;
}

export interface RoomEntryDeps {
  db: Db;
  /** `[call_in]`, for the event's meeting details. */
  callIn?: { tel?: string; uri?: string };
}

/** The room rule: its owner and its event's moderator invitees moderate; other users are users. */
export function userRoleInRoom(isRoomOwner: boolean, inviteRole: EventInviteRole | null): 'moderator' | 'user' {
  return isRoomOwner || inviteRole === 'moderator' ? 'moderator' : 'user';
}

export function createRoomEntryService({ db, callIn = {} }: RoomEntryDeps): RoomEntryService {
  async function enter(roomId: string, entrant: Entrant): Promise<RoomEntry | undefined> {
    const userId = entrant.kind === 'user' ? entrant.userId : null;
    const inviteCode = entrant.kind === 'guest' ? entrant.inviteCode : null;
    const row = await findRoomEntryRow(db, roomId, { userId, inviteCode });
    if (!row) return undefined;
    const isRoomOwner = userId !== null && userId === row.created_by;
    if (row.banned && !isRoomOwner) return undefined;
    if (inviteCode !== null && !row.invite_active) return undefined;
    const event = await eventOf(row);
    return {
      room: {
        id: row.room_id,
        ownerId: row.created_by,
        waitingRoom: row.waiting_room,
        ownerTariffName: row.tariff_name,
        ...(event ? { event } : {}),
      },
      role: userId === null ? 'guest' : userRoleInRoom(isRoomOwner, row.invite_role),
      isRoomOwner,
      ...(row.user_avatar_url ? { avatarUrl: row.user_avatar_url } : {}),
      // a copy: the row may be shared with other entrants' reads (sharingInFlight)
      ...(userId !== null ? { groups: [...(row.user_groups ?? [])] } : {}),
    };
  }

  /** As GET /rooms/{room_id}/event answers it: the owner's choice of details, the same for every participant. */
  async function eventOf(row: RoomEntryRow): Promise<RoomEventInfo | undefined> {
    if (row.event_id === null) return undefined;
    const details = row.event_shows_details ? toMeetingDetails(await findMeetingDetails(db, row.room_id), callIn) : undefined;
    return {
      id: row.event_id,
      room_id: row.room_id,
      title: row.event_title ?? '',
      is_adhoc: row.event_is_adhoc ?? false,
      ...(details ? { meeting_details: details } : {}),
    };
  }

  return {
    enter,
    ban: (roomId, userId, bannedBy) => insertRoomBan(db, roomId, userId, bannedBy),
    revokeInviteCode: (roomId, code, revokedBy, now) => deactivateInviteCode(db, roomId, code, revokedBy, now),
  };
}
