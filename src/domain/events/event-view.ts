/**
 * The contract's shapes of an event, an occurrence (EventInstance) and an exception as listed by
 * `GET /events` (EventException), built from rows for one caller (the contract; as the reference controller
 * builds them). `created_by`/`updated_by` profiles and invitees are looked up beforehand, in batches.
 */
import type { components } from '../../../generated/openapi.js';
import type { Config } from '../../config/schema.js';
import type { EventExceptionRow } from '../../db/schema.js';
import type { PublicUserProfile } from '../users/user.js';
import type { EventViewRow } from './events.repository.js';
import { placeOccurrence } from './instances.js';
import type { Invitee } from './invitees.js';
import { formatInstanceId } from './recurrence.js';

type Schemas = components['schemas'];
export type Event = Schemas['Event'];
export type EventInstance = Schemas['EventInstance'];
export type EventException = Schemas['EventException'];
export type EventListItem = Schemas['EventListItem'];
type DateTimeTz = Schemas['DateTimeTz'];
type EventRoomInfo = Schemas['EventRoomInfo'];
type StreamingTarget = Schemas['StreamingTarget'];

export interface ViewContext {
  callerId: string;
  callIn: Config['call_in'];
  profiles: Map<string, PublicUserProfile>;
  /** The first `invitees_max` invitees per event; absent: none shown. */
  invitees: Map<string, Invitee[]>;
}

/**
 * RFC 3339 in UTC, without a fraction when there is none (`2026-12-01T09:00:00Z`). From the date's
 * parts: a page of events writes some 150 instants, and `toISOString` took three times as long.
 */
export function utc(date: Date): string {
  const year = date.getUTCFullYear();
  // toISOString writes years outside 0000–9999 with a sign and six digits
  if (!(year >= 0 && year <= 9999)) return date.toISOString().replace('.000Z', 'Z'); // and an invalid date throws as it did
  const ms = date.getUTCMilliseconds();
  const fraction = ms === 0 ? '' : `.${String(ms).padStart(3, '0')}`;
  return `${String(year).padStart(4, '0')}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}T${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}${fraction}Z`;
}

const two = (n: number): string => (n < 10 ? `0${n}` : String(n));

const dateTimeTz = (date: Date, timezone: string): DateTimeTz => ({ datetime: utc(date), timezone });

function profile(ctx: ViewContext, userId: string): PublicUserProfile {
  const found = ctx.profiles.get(userId);
  if (!found) throw new Error(`profile of user ${userId} was not loaded`);
  return found;
}

/** `call_in` only with a configured `[call_in] tel` and a SIP config of the room (as the reference controller does). */
function roomInfo(row: EventViewRow, ctx: ViewContext): EventRoomInfo {
  const { tel, uri } = ctx.callIn;
  return {
    id: row.room_id,
    ...(row.room_password ? { password: row.room_password } : {}),
    waiting_room: row.room_waiting_room,
    ...(tel && row.sip_id && row.sip_password ? { call_in: { tel, ...(uri ? { uri } : {}), id: row.sip_id, password: row.sip_password } } : {}),
  };
}

/** What the event, its occurrences and its exceptions share for one caller. */
function common(row: EventViewRow, ctx: ViewContext) {
  const invitees = ctx.invitees.get(row.id) ?? [];
  const isCreator = row.created_by === ctx.callerId;
  return {
    room: roomInfo(row, ctx),
    invitees_truncated: row.invitee_count > invitees.length,
    invitees,
    invite_status: isCreator ? ('accepted' as const) : (row.my_invite_status ?? 'pending'),
    is_favorite: row.is_favorite,
    can_edit: isCreator,
  };
}

export function toEvent(row: EventViewRow, ctx: ViewContext): Event {
  const timed =
    row.is_time_independent || !row.starts_at || !row.ends_at
      ? {}
      : {
          is_all_day: row.is_all_day ?? false,
          starts_at: dateTimeTz(row.starts_at, row.starts_at_tz ?? 'UTC'),
          ends_at: dateTimeTz(row.ends_at, row.ends_at_tz ?? 'UTC'),
        };
  const shared = common(row, ctx);
  return {
    id: row.id,
    created_by: profile(ctx, row.created_by),
    created_at: utc(row.created_at),
    updated_by: profile(ctx, row.updated_by),
    updated_at: utc(row.updated_at),
    title: row.title,
    description: row.description,
    room: shared.room,
    invitees_truncated: shared.invitees_truncated,
    invitees: shared.invitees,
    is_time_independent: row.is_time_independent,
    ...timed,
    recurrence_pattern: row.recurrence_pattern,
    is_adhoc: row.is_adhoc,
    type: row.recurrence_pattern.length > 0 ? 'recurring' : 'single',
    status: 'ok',
    invite_status: shared.invite_status,
    is_favorite: shared.is_favorite,
    can_edit: shared.can_edit,
    show_meeting_details: row.show_meeting_details,
    streaming_targets: streamingTargets(row, shared.can_edit),
  };
}

/** The room's streaming targets; the key that lets anyone publish to a stream for its owner only. */
function streamingTargets(row: EventViewRow, isOwner: boolean): StreamingTarget[] {
  return row.streaming_targets.map(({ streaming_key, ...target }) => (isOwner ? { ...target, streaming_key } : target));
}

/** One occurrence (original UTC start `start`) with its exception, if any, applied. */
export function toInstance(row: EventViewRow, start: Date, exception: EventExceptionRow | undefined, ctx: ViewContext): EventInstance {
  const instanceId = formatInstanceId(start);
  const durationMs = row.ends_at && row.starts_at ? row.ends_at.getTime() - row.starts_at.getTime() : 0;
  const { start: startsAt, end: endsAt } = placeOccurrence(durationMs, start, exception);
  const startsTz = exception?.starts_at_tz ?? row.starts_at_tz ?? 'UTC';
  const endsTz = exception?.ends_at_tz ?? row.ends_at_tz ?? startsTz;
  const shared = common(row, ctx);
  // the occurrence was last changed by its exception or by the event, whichever is later
  const exceptionIsLatest = exception !== undefined && exception.updated_at > row.updated_at;
  return {
    id: `${row.id}_${instanceId}`,
    recurring_event_id: row.id,
    instance_id: instanceId,
    created_by: profile(ctx, row.created_by),
    created_at: utc(row.created_at),
    updated_by: profile(ctx, exceptionIsLatest ? exception.created_by : row.updated_by),
    updated_at: utc(exceptionIsLatest ? exception.updated_at : row.updated_at),
    title: exception?.title ?? row.title,
    description: exception?.description ?? row.description,
    room: shared.room,
    invitees_truncated: shared.invitees_truncated,
    invitees: shared.invitees,
    is_all_day: exception?.is_all_day ?? row.is_all_day ?? false,
    starts_at: dateTimeTz(startsAt, startsTz),
    ends_at: dateTimeTz(endsAt, endsTz),
    type: 'instance',
    status: exception?.status ?? 'ok',
    invite_status: shared.invite_status,
    is_favorite: shared.is_favorite,
    can_edit: shared.can_edit,
  };
}

/** An exception as `GET /events` lists it after its event: the changed occurrence plus its original start. */
export function toException(row: EventViewRow, exception: EventExceptionRow, ctx: ViewContext): EventException {
  const instance = toInstance(row, exception.instance_start, exception, ctx);
  return {
    ...instance,
    original_starts_at: dateTimeTz(exception.instance_start, row.starts_at_tz ?? 'UTC'),
    created_by: profile(ctx, exception.created_by),
    created_at: utc(exception.created_at),
    updated_by: profile(ctx, exception.created_by),
    updated_at: utc(exception.updated_at),
    type: 'exception',
  };
}
