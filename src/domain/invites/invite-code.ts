/**
 * Invite codes are UUIDs (the primary key of `room_invites`). Anything else cannot be one, so it is
 * refused before it reaches the database: PostgreSQL would answer a malformed uuid with an error,
 * never with "no such row".
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isInviteCodeFormat = (value: string): boolean => UUID.test(value);
