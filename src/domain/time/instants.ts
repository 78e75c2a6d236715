/**
 * Instants read from the contract's `date-time` strings. The schema's format check lets through
 * values a Date cannot hold (the leap second `23:59:60`) and values outside the years 0000 to 9999
 * in UTC (`9999-12-31T23:00:00-14:00` is valid RFC 3339, but the year 10000 in UTC, and answers
 * always write UTC, with RFC 3339's four-digit years): both are field errors, never stored.
 */
import { errors } from '../../errors.js';

export const EARLIEST_INSTANT = Date.parse('0000-01-01T00:00:00.000Z');
export const LATEST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/** The instant of an RFC 3339 string the schema accepted; 400 `validation_failed` naming `field` when it has none that an answer can show. */
export function instant(value: string, field: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw errors.validationFailed([{ field, code: 'invalid_date_time', message: 'not a representable date-time' }]);
  if (date.getTime() < EARLIEST_INSTANT || date.getTime() > LATEST_INSTANT) {
    throw errors.validationFailed([{ field, code: 'invalid_date_time', message: 'outside the years 0000 to 9999 in UTC' }]);
  }
  return date;
}
