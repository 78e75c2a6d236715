/**
 * Invite codes are UUIDs (the primary key of `room_invites`). Anything else cannot be one, so it is
 * refused before it reaches the database (uuid.ts).
 */
import { attemptKeys, type AttemptKey } from '../rate-limit/rate-limiter.js';
import { isUuid } from '../uuid.js';

export const isInviteCodeFormat = (value: string): boolean => isUuid(value);

/**
 * The rate-limit keys of presenting `code` from `source`, however it is presented (a body, an
 * `Authorization` header, a start): one budget per source for guessing codes, and one per code
 * guessed, whatever the spelling of its hex digits. Never the room: a stranger's random codes must
 * not refuse the room's guests (a code is 122 random bits; the source budget bounds the guessing).
 */
export const inviteAttemptKeys = (source: string, code: string): AttemptKey[] => attemptKeys('invite', source, code.toLowerCase());
