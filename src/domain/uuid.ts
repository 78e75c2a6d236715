/**
 * A UUID in RFC 4122's string form, as PostgreSQL's uuid type reads it: hex digits in either case,
 * hyphenated, no `urn:uuid:` prefix and no braces. Anything else is refused before it reaches the
 * database, which would answer a malformed uuid with an error, never with "no such row".
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string): boolean => UUID_PATTERN.test(value);
