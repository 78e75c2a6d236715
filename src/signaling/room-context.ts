/**
 * What a signaling connection needs to know about its room and its participant, read once when the
 * ticket is redeemed: the room's owner and waiting room, the owner's tariff, the room's event, and
 * who the participant is (role, owner, avatar, groups). Roles (docs/architecture.md §6):
 * the room's creator and event invitees with the moderator role are moderators, other registered
 * users `user`, invite-code guests and call-in participants `guest`.
 */
import type { Role, Tariff, EventInfo } from '../../generated/signaling/types.js';
import type { RoomEntryService } from '../domain/rooms/room-entry.service.js';
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
 * The room and participant of a redeemed ticket, as the room entry service lets it in, or undefined
 * when the room is gone, the user was banned from it or the guest's invite code deactivated.
 */
export async function loadRoomContext(
  roomEntry: RoomEntryService,
  tariffs: TariffCatalog,
  ticket: TicketData,
): Promise<{ room: RoomContext; participant: ParticipantContext } | undefined> {
  const entry = await roomEntry.enter(ticket.roomId, ticket.who);
  if (!entry) return undefined;
  const { room } = entry;
  return {
    room: {
      roomId: room.id,
      ownerId: room.ownerId,
      waitingRoom: room.waitingRoom,
      tariff: tariffs.forUser({ tariff_name: room.ownerTariffName }),
      ...(room.event ? { eventInfo: room.event } : {}),
    },
    participant: {
      id: ticket.participantId,
      who: ticket.who,
      kind: ticket.who.kind,
      role: entry.role,
      isRoomOwner: entry.isRoomOwner,
      ...(entry.avatarUrl !== undefined ? { avatarUrl: entry.avatarUrl } : {}),
      ...(entry.groups !== undefined ? { groups: entry.groups } : {}),
      resuming: ticket.resuming,
      resumption: ticket.resumption,
    },
  };
}
