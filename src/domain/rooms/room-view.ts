/**
 * The contract's shapes of a room and of the event that uses it (the contract), built from
 * database rows. A room without a password has no `password` field (README decision 2026-11-21).
 */
import type { components } from '../../../generated/openapi.js';
import type { EventRow, RoomRow } from '../../db/schema.js';
import type { MeetingDetailsRows } from './rooms.repository.js';

export type Room = components['schemas']['Room'];
export type RoomEventInfo = components['schemas']['RoomEventInfo'];

export function toRoom(row: RoomRow): Room {
  return {
    id: row.id,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    ...(row.password ? { password: row.password } : {}),
    waiting_room: row.waiting_room,
  };
}

export type MeetingDetails = components['schemas']['MeetingDetails'];

export function toRoomEventInfo(event: Pick<EventRow, 'id' | 'room_id' | 'title' | 'is_adhoc'>, details?: MeetingDetails): RoomEventInfo {
  return { id: event.id, room_id: event.room_id, title: event.title, is_adhoc: event.is_adhoc, ...(details ? { meeting_details: details } : {}) };
}

/**
 * The details an event with `show_meeting_details` shows everyone who may read its room's event:
 * `call_in` as in the event's own view (a configured `[call_in] tel` and the room's SIP config).
 */
export function toMeetingDetails(rows: MeetingDetailsRows, callIn: { tel?: string; uri?: string }): MeetingDetails {
  const { tel, uri } = callIn;
  return {
    ...(rows.inviteCode ? { invite_code_id: rows.inviteCode } : {}),
    ...(tel && rows.sip ? { call_in: { tel, ...(uri ? { uri } : {}), id: rows.sip.sip_id, password: rows.sip.password } } : {}),
    streaming_links: rows.streams.map((stream) => ({ name: stream.name, url: stream.public_url })),
  };
}

/** Absent, null and the empty string all mean "no password" (stored as null). */
export function normalizePassword(password: string | null | undefined): string | null {
  return password ? password : null;
}
