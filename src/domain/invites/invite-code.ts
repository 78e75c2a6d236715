/**
 * Invite codes are UUIDs (the primary key of `room_invites`). Anything else cannot be one, so it is
 * refused before it reaches the database (uuid.ts).
 */
import { isUuid } from '../uuid.js';

export const isInviteCodeFormat = (value: string): boolean => isUuid(value);
