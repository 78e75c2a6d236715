/** The contract's shapes of room invite codes (the contract InviteCode, invite verification). */
import type { components } from '../../../generated/openapi.js';
import type { RoomInviteRow } from '../../db/schema.js';
import type { PublicUserProfile } from '../users/user.js';

export type RoomInvite = components['schemas']['RoomInvite'];
export type InviteVerifyResult = components['schemas']['InviteVerifyResult'];

/** `profiles` holds the creator's and last editor's public profiles by user id. */
export function toRoomInvite(row: RoomInviteRow, profiles: ReadonlyMap<string, PublicUserProfile>): RoomInvite {
  return {
    invite_code: row.code,
    created: row.created_at.toISOString(),
    created_by: profileOf(profiles, row.created_by),
    updated: row.updated_at.toISOString(),
    updated_by: profileOf(profiles, row.updated_by),
    room: row.room_id,
    active: row.active,
    expiration: row.expiration === null ? null : row.expiration.toISOString(),
  };
}

function profileOf(profiles: ReadonlyMap<string, PublicUserProfile>, id: string): PublicUserProfile {
  const profile = profiles.get(id);
  // users are deleted with their invites (foreign key cascade), so a missing profile is a bug
  if (!profile) throw new Error(`no profile loaded for user ${id}`);
  return profile;
}
