/**
 * The contract's `format: uri` (ajv) accepts any scheme-prefixed string, including `http://` and
 * `http:x`, which name no server. A streaming endpoint or a public URL must say where to connect, so
 * we also require `scheme://authority` with a non-empty host, parseable as a WHATWG URL.
 */
import { errors, type FieldError } from '../../errors.js';

const SCHEME_AND_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]+/i;

function isAbsoluteUriWithHost(value: string): boolean {
  if (!SCHEME_AND_AUTHORITY.test(value)) return false;
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}

/** A failure for each of `fields` present in `body` that is not an absolute URI with a host; `prefix` goes before each name. */
export function absoluteUriFailures<T extends object>(body: T, fields: readonly (keyof T & string)[], prefix = ''): FieldError[] {
  const failures: FieldError[] = [];
  for (const field of fields) {
    const value = body[field];
    if (typeof value === 'string' && !isAbsoluteUriWithHost(value)) {
      failures.push({ field: `${prefix}${field}`, code: 'invalid_uri', message: 'must be an absolute URI with a host (scheme://host/…)' });
    }
  }
  return failures;
}

/** 400 `validation_failed` naming each of `fields` present in `body` that is not an absolute URI with a host. */
export function checkAbsoluteUris<T extends object>(body: T, fields: readonly (keyof T & string)[]): void {
  const failures = absoluteUriFailures(body, fields);
  if (failures.length > 0) throw errors.validationFailed(failures);
}
