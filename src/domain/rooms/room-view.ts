/**
 * The contract's shapes of a room and of the event that uses it (the contract), built from
 * database rows. A room without a password has no `password` field (README decision 2026-11-21).
 */
import type { components } from '../../../generated/openapi.js';
import type { EventRow, RoomRow } from '../../db/schema.js';

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

export function toRoomEventInfo(event: Pick<EventRow, 'id' | 'room_id' | 'title' | 'is_adhoc'>): RoomEventInfo {
  return { id: event.id, room_id: event.room_id, title: event.title, is_adhoc: event.is_adhoc };
}

/** Absent, null and the empty string all mean "no password" (stored as null). */
export function normalizePassword(password: string | null | undefined): string | null {
  return password ? password : null;
}
