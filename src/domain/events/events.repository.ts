/**
 * Events' rows. Reads go through `viewQuery`: the event with what its answer needs for one caller
 * (its room, the room's SIP config, the caller's invite and favorite) in one query, so that a page
 * of `GET /events` costs one query plus one batched query per related table, never one per event.
 * The reads of the listings are prepared statements (db/prepared.ts): planning the view query took
 * as long as running it.
 */
import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { columnsOf, executePrepared, preparedQuery, preparedShapes } from '../../db/prepared.js';
import type {
  DB,
  EventExceptionRow,
  EventInviteStatus,
  EventPatch,
  EventRow,
  NewEventExceptionRow,
  NewEventRow,
  NewRoomRow,
  RoomPatch,
  StreamingTargetRow,
} from '../../db/schema.js';
import { PUBLIC_PROFILE_FIELDS, type PublicUserProfile } from '../users/user.js';
import { notBannedFrom } from '../rooms/room-bans.repository.js';
import type { ListPosition } from './cursor.js';

type Db = Kysely<DB>;

/** The columns of an event that a view leaves out: the listing's own index columns, no answer's. */
type ListingColumns = 'range_end' | 'span_start' | 'span_end' | 'span_class';
const LISTING_COLUMNS: ReadonlySet<string> = new Set<ListingColumns>(['range_end', 'span_start', 'span_end', 'span_class']);

/** An event as one caller sees it. */
export interface EventViewRow extends Omit<EventRow, ListingColumns> {
  room_password: string | null;
  room_waiting_room: boolean;
  sip_id: string | null;
  sip_password: string | null;
  /** The caller's invite status; null when the caller has no invite (e.g. the creator). */
  my_invite_status: EventInviteStatus | null;
  is_favorite: boolean;
  /** `created_at` to the microsecond, as the keyset cursor needs it (a Date keeps milliseconds only). */
  created_at_key: string;
  /** Registered and e-mail invitees, for `invitees_truncated` without another query. */
  invitee_count: number;
  /** The room's streaming targets, oldest first, in the same query (a page costs no query more). */
  streaming_targets: StreamingTargetJson[];
}

/** A streaming target as the view query's JSON carries it. */
export type StreamingTargetJson = Pick<StreamingTargetRow, 'id' | 'name' | 'kind' | 'streaming_endpoint' | 'streaming_key' | 'public_url'>;

const EVENT_COLUMNS = columnsOf<EventRow>({
  id: true,
  room_id: true,
  created_by: true,
  created_at: true,
  updated_by: true,
  updated_at: true,
  title: true,
  description: true,
  is_time_independent: true,
  is_all_day: true,
  starts_at: true,
  starts_at_tz: true,
  ends_at: true,
  ends_at_tz: true,
  duration_secs: true,
  recurrence_pattern: true,
  range_end: true,
  span_start: true,
  span_end: true,
  span_class: true,
  is_adhoc: true,
  ical_sequence: true,
  show_meeting_details: true,
});

/**
 * An event's columns in a view. A page of 30 events carried 90 instants and 30 numbers that no
 * answer shows; leaving them out made reading the page a fifth cheaper.
 */
const VIEW_COLUMNS = EVENT_COLUMNS.filter((column): column is Exclude<typeof column, ListingColumns> => !LISTING_COLUMNS.has(column));

const EXCEPTION_COLUMNS = columnsOf<EventExceptionRow>({
  event_id: true,
  instance_start: true,
  status: true,
  title: true,
  description: true,
  is_all_day: true,
  starts_at: true,
  starts_at_tz: true,
  ends_at: true,
  ends_at_tz: true,
  created_by: true,
  created_at: true,
  updated_at: true,
});

function viewQuery(db: Db, callerId: string) {
  return (
    db
      .selectFrom('events')
      .innerJoin('rooms', 'rooms.id', 'events.room_id')
      .leftJoin('sip_configs', 'sip_configs.room_id', 'events.room_id')
      // a caller banned from the event's room has no invitation to show or read it by
      .leftJoin('event_invites as my_invite', (join) =>
        join
          .onRef('my_invite.event_id', '=', 'events.id')
          .on('my_invite.invitee', '=', callerId)
          .on(notBannedFrom(sql.ref('events.room_id'), callerId)),
      )
      .leftJoin('event_favorites as favorite', (join) => join.onRef('favorite.event_id', '=', 'events.id').on('favorite.user_id', '=', callerId))
      .select(VIEW_COLUMNS.map((column) => `events.${column}` as const))
      .select((eb) => [
        'rooms.password as room_password',
        'rooms.waiting_room as room_waiting_room',
        sql<string | null>`${eb.ref('sip_configs.sip_id')}::text`.as('sip_id'),
        sql<string | null>`${eb.ref('sip_configs.password')}::text`.as('sip_password'),
        'my_invite.status as my_invite_status',
        sql<boolean>`${eb.ref('favorite.user_id')} is not null`.as('is_favorite'),
        sql<string>`to_char(${eb.ref('events.created_at')} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('created_at_key'),
        sql<number>`((select count(*) from event_invites c where c.event_id = ${eb.ref('events.id')})
        + (select count(*) from event_email_invites c where c.event_id = ${eb.ref('events.id')}))::int`.as('invitee_count'),
        sql<StreamingTargetJson[]>`(select coalesce(json_agg(json_build_object(
          'id', t.id, 'name', t.name, 'kind', t.kind, 'streaming_endpoint', t.streaming_endpoint,
          'streaming_key', t.streaming_key, 'public_url', t.public_url) order by t.created_at, t.id), '[]'::json)
        from streaming_targets t where t.room_id = ${eb.ref('events.room_id')})`.as('streaming_targets'),
      ])
  );
}

const eventViewQuery = preparedQuery(['callerId', 'eventId'], (db, { callerId, eventId }: { callerId: string; eventId: string }) =>
  viewQuery(db, callerId).where('events.id', '=', eventId),
);

export async function findEventView(db: Db, callerId: string, eventId: string): Promise<EventViewRow | undefined> {
  return eventViewQuery.takeFirst(db, { callerId, eventId });
}

export interface ListFilter {
  timeMin?: Date;
  timeMax?: Date;
  favorites?: boolean;
  adhoc?: boolean;
  timeIndependent?: boolean;
  /** The caller's invite statuses to keep; their own events count as `accepted`. */
  inviteStatuses?: EventInviteStatus[];
  after?: ListPosition;
  limit: number;
}

/** A listed event with the exceptions of its series (none for a single event), in original-start order. */
export interface EventListRow extends EventViewRow {
  exceptions: EventExceptionRow[];
}

/** An exception as the listing's JSON carries it: its instants as text. */
type ExceptionJson = {
  [K in keyof EventExceptionRow]: EventExceptionRow[K] extends Date ? string : EventExceptionRow[K] extends Date | null ? string | null : EventExceptionRow[K];
};

/**
 * The events the caller created or has a user invite to (any status; not banned from their rooms),
 * filtered, in keyset order, each with its exceptions: a page is one query.
 */
export async function listEventViews(db: Db, callerId: string, filter: ListFilter): Promise<EventListRow[]> {
  const rows = (await listQueries.execute(db, { callerId, filter })) as (EventViewRow & { exceptions: ExceptionJson[] | EventExceptionRow[] })[];
  for (const row of rows) row.exceptions = (row.exceptions as ExceptionJson[]).map(exceptionFromJson);
  return rows as EventListRow[];
}

const INSTANT_COLUMNS = new Set<string>(['instance_start', 'starts_at', 'ends_at', 'created_at', 'updated_at']);

/** An instant as RFC 3339 in UTC, whatever the session's time zone (whose offsets JSON would write, some to the second). */
const utcText = (column: RawBuilder<unknown>) => sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

const instantOrNull = (text: string | null) => (text === null ? null : new Date(text));

function exceptionFromJson(json: ExceptionJson): EventExceptionRow {
  return {
    ...json,
    instance_start: new Date(json.instance_start),
    starts_at: instantOrNull(json.starts_at),
    ends_at: instantOrNull(json.ends_at),
    created_at: new Date(json.created_at),
    updated_at: new Date(json.updated_at),
  };
}

/**
 * The exceptions of a listed series as JSON, in original-start order (the primary key's): what
 * was a second query per page. A single event's are not listed (it has no occurrence to list them after).
 */
const EXCEPTIONS_JSON = sql<ExceptionJson[]>`(select coalesce(json_agg(json_build_object(${sql.join(
  EXCEPTION_COLUMNS.map((column) => sql`${sql.lit(column)}, ${INSTANT_COLUMNS.has(column) ? utcText(sql.ref(`x.${column}`)) : sql.ref(`x.${column}`)}`),
)}) order by x.instance_start), '[]'::json)
  from event_exceptions x where x.event_id = events.id and cardinality(events.recurrence_pattern) > 0)`;

const KEYSET_ORDER = sql`e.starts_at asc nulls first, e.created_at asc, e.id asc`;

/** A listing as `listQuery` reads it: the filter decides the shape, the values come as parameters. */
interface Listing {
  callerId: string;
  filter: ListFilter;
}

/** The values of a listing's parameters; those its shape does not use are undefined. */
interface ListValues extends Record<string, unknown> {
  callerId: string;
  timeMin?: Date;
  timeMax?: Date;
  adhoc?: boolean;
  timeIndependent?: boolean;
  statuses?: EventInviteStatus[];
  afterStartsAt?: Date;
  afterCreatedAtKey?: string;
  afterId?: string;
  limit: number;
}

const listQueries = preparedShapes(
  ({ filter: f }: Listing) =>
    [
      f.timeMin ? 'min' : '',
      f.timeMax ? 'max' : '',
      f.favorites ? 'favorites' : '',
      f.adhoc === undefined ? '' : 'adhoc',
      f.timeIndependent === undefined ? '' : 'independent',
      f.inviteStatuses ? `statuses${f.inviteStatuses.includes('accepted') ? '+own' : ''}` : '',
      f.after ? (f.after.startsAt === null ? 'after-untimed' : 'after') : '',
    ].join(' '),
  ({ callerId, filter: f }: Listing): ListValues => ({
    callerId,
    timeMin: f.timeMin,
    timeMax: f.timeMax,
    adhoc: f.adhoc,
    timeIndependent: f.timeIndependent,
    statuses: f.inviteStatuses,
    afterStartsAt: f.after?.startsAt ?? undefined,
    afterCreatedAtKey: f.after?.createdAtKey,
    afterId: f.after?.id,
    limit: f.limit,
  }),
  listQuery,
);

/**
 * How far the span of an event of `span_class` 0 and 1 reaches from its `starts_at` (the
 * generated column's bounds, migration 2026_11_29_0001); class 2 reaches without bound.
 */
const CLASS_REACH = [sql`interval '48 hours'`, sql`interval '9600 hours'`] as const;

/**
 * The page is chosen on `events` alone (index-friendly, no joins), and only its rows are then joined
 * to what their answers need; joining first and cutting after would join every visible event.
 * Branches on `filter` (the shape), takes every value from `values` (placeholders, see prepared.ts).
 *
 * Each source of the caller's events is a branch that reads its first `limit` rows in keyset order
 * straight from an index, and the page is the first `limit` of their union: the caller's own events
 * (with a time range: one branch per span class, its `starts_at` bounded by the range widened by the
 * class's reach) and those they are invited to. A page thus reads about as many rows as it answers,
 * however many events the caller has outside the range or before the cursor.
 */
function listQuery(db: Db, { filter }: Listing, values: ListValues) {
  const { callerId } = values;
  const own = () => db.selectFrom('events as e').where('e.created_by', '=', callerId);
  const branches = filter.timeMin || filter.timeMax ? [0, 1, 2].map((spanClass) => inSpanClass(own(), spanClass, filter, values)) : [own()];
  const invited = db
    .selectFrom('events as e')
    .where('e.created_by', '<>', callerId)
    .where('e.id', 'in', (eb) => eb.selectFrom('event_invites').select('event_invites.event_id').where('event_invites.invitee', '=', callerId))
    .where(notBannedFrom(sql.ref('e.room_id'), callerId));
  const [first, ...rest] = [...branches, invited].map((branch) =>
    db.selectFrom(matching(branch, filter, values).as('b')).select(['b.id', 'b.starts_at', 'b.created_at']),
  );
  const union = rest.reduce((all, branch) => all.unionAll(branch), first!);
  const page = db
    .selectFrom(union.as('page'))
    .select('page.id')
    .orderBy(sql`page.starts_at asc nulls first, page.created_at asc, page.id asc`)
    .limit(values.limit);
  return viewQuery(db, callerId)
    .select(EXCEPTIONS_JSON.as('exceptions'))
    .where('events.id', 'in', page)
    .orderBy(sql`events.starts_at asc nulls first`)
    .orderBy('events.created_at')
    .orderBy('events.id');
}

type EventsQuery = SelectQueryBuilder<DB & { e: DB['events'] }, 'e', object>;

/** The caller's own events of one span class; with a time range, `starts_at` within the range widened by the class's reach. */
function inSpanClass(query: EventsQuery, spanClass: number, filter: ListFilter, values: ListValues): EventsQuery {
  let bounded = query.where(sql<boolean>`e.span_class = ${sql.lit(spanClass)}`);
  const reach = CLASS_REACH[spanClass];
  if (!reach) return bounded;
  if (filter.timeMin) bounded = bounded.where(sql<boolean>`e.starts_at >= ${values.timeMin}::timestamptz - ${reach}`);
  if (filter.timeMax) bounded = bounded.where(sql<boolean>`e.starts_at <= ${values.timeMax}::timestamptz + ${reach}`);
  return bounded;
}

/** The listing's filters, the cursor and the keyset order on one source of events: its first `limit` rows. */
function matching(query: EventsQuery, filter: ListFilter, values: ListValues) {
  const { callerId } = values;
  let page = query.select(['e.id', 'e.starts_at', 'e.created_at']);
  // Overlap of [span_start, span_end] (where the occurrences lie, moved ones included; span_end
  // null: open-ended series) with the range; a time-independent event has no span and never
  // matches a bound.
  if (filter.timeMin) {
    page = page.where((eb) => eb.or([eb('e.span_end', '>=', values.timeMin!), eb.and([eb('e.span_end', 'is', null), eb('e.span_start', 'is not', null)])]));
  }
  if (filter.timeMax) page = page.where('e.span_start', '<=', values.timeMax!);
  if (filter.favorites) {
    page = page.where((eb) =>
      eb.exists(eb.selectFrom('event_favorites as f').select('f.event_id').whereRef('f.event_id', '=', 'e.id').where('f.user_id', '=', callerId)),
    );
  }
  if (filter.adhoc !== undefined) page = page.where('e.is_adhoc', '=', values.adhoc!);
  if (filter.timeIndependent !== undefined) page = page.where('e.is_time_independent', '=', values.timeIndependent!);
  const statuses = filter.inviteStatuses;
  if (statuses) {
    page = page.where((eb) =>
      eb.or([
        ...(statuses.includes('accepted') ? [eb('e.created_by', '=', callerId)] : []),
        eb.exists(
          eb
            .selectFrom('event_invites as i')
            .select('i.event_id')
            .whereRef('i.event_id', '=', 'e.id')
            .where('i.invitee', '=', callerId)
            // one array parameter: a statement for any list of statuses
            .where(sql<boolean>`i.status = any(${values.statuses}::text[])`),
        ),
      ]),
    );
  }
  const after = filter.after;
  if (after) {
    const rest = sql<boolean>`(e.created_at, e.id) > (${values.afterCreatedAtKey}::timestamptz, ${values.afterId}::uuid)`;
    page =
      after.startsAt === null
        ? page.where((eb) => eb.or([eb.and([eb('e.starts_at', 'is', null), rest]), eb('e.starts_at', 'is not', null)]))
        : // the first condition, implied by the second, starts the index scan at the cursor
          page
            .where('e.starts_at', '>=', values.afterStartsAt!)
            .where((eb) => eb.or([eb('e.starts_at', '>', values.afterStartsAt!), eb.and([eb('e.starts_at', '=', values.afterStartsAt!), rest])]));
  }
  return page.orderBy(KEYSET_ORDER).limit(values.limit);
}

/** The public profiles of the given users, by id (one query). */
export async function profilesOf(db: Db, userIds: Iterable<string>): Promise<Map<string, PublicUserProfile>> {
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(PUBLIC_PROFILE_FIELDS).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, row]));
}

/** Where a moved occurrence is listed from: its own start, else its original one (as `placeOccurrence`). */
const movedStart = sql<Date>`coalesce(starts_at, instance_start)`;

export interface MovedWindow {
  /** The event's duration, the end of a moved occurrence without an end of its own. */
  durationMs: number;
  /** Only those ending at or after this instant. */
  from?: Date;
  /** Only those starting at or before this instant. */
  to?: Date;
  /** Only those after this position (where they are, then original start). */
  after?: { at: Date; original: Date };
  limit: number;
}

/**
 * The exceptions of one event that move their occurrence (a start or an end of their own) and
 * whose occurrence, where it is now, overlaps [from, to]: the first `limit` in the order of where
 * they are (ties by original start) after `after`, answered in no particular order.
 */
export async function movedExceptionsIn(db: Db, eventId: string, window: MovedWindow): Promise<EventExceptionRow[]> {
  return (await pageExceptionQueries.execute(db, { eventId, window })).map(withoutSource);
}

/**
 * For a page of instances, in one query (prepared per shape: it runs on every page): the exceptions
 * of the original slots [slots.from, slots.to] (`slots`), and those of `movedExceptionsIn` (`moved`).
 */
export async function exceptionsOfPage(
  db: Db,
  eventId: string,
  slots: { from: Date; to: Date } | undefined,
  window: MovedWindow,
): Promise<{ slots: EventExceptionRow[]; moved: EventExceptionRow[] }> {
  const rows = await pageExceptionQueries.execute(db, { eventId, slots, window });
  return { slots: rows.filter((r) => !r.moved_branch).map(withoutSource), moved: rows.filter((r) => r.moved_branch).map(withoutSource) };
}

const withoutSource = ({ moved_branch: _, ...row }: EventExceptionRow & { moved_branch: boolean }): EventExceptionRow => row;

interface PageExceptions {
  eventId: string;
  slots?: { from: Date; to: Date };
  window: MovedWindow;
}

interface PageExceptionValues extends Record<string, unknown> {
  eventId: string;
  slotsFrom?: Date;
  slotsTo?: Date;
  durationMs?: number;
  from?: Date;
  to?: Date;
  afterAt?: Date;
  afterOriginal?: Date;
  limit: number;
}

const pageExceptionQueries = preparedShapes(
  ({ slots, window: w }: PageExceptions) => [slots ? 'slots' : '', w.from ? 'from' : '', w.to ? 'to' : '', w.after ? 'after' : ''].join(' '),
  ({ eventId, slots, window: w }: PageExceptions): PageExceptionValues => ({
    eventId,
    slotsFrom: slots?.from,
    slotsTo: slots?.to,
    durationMs: w.from ? w.durationMs : undefined,
    from: w.from,
    to: w.to,
    afterAt: w.after?.at,
    afterOriginal: w.after?.original,
    limit: w.limit,
  }),
  (db, { slots, window: w }, values) => {
    let moved = db
      .selectFrom('event_exceptions')
      .select(EXCEPTION_COLUMNS)
      .where('event_id', '=', values.eventId)
      .where((eb) => eb.or([eb('starts_at', 'is not', null), eb('ends_at', 'is not', null)]));
    if (w.from) {
      const end = sql`coalesce(ends_at, ${movedStart} + ${values.durationMs}::float8 * interval '1 millisecond')`;
      moved = moved.where(sql<boolean>`${end} >= ${values.from}::timestamptz`);
    }
    if (w.to) moved = moved.where(sql<boolean>`${movedStart} <= ${values.to}::timestamptz`);
    if (w.after) {
      moved = moved.where(sql<boolean>`(${movedStart}, instance_start) > (${values.afterAt}::timestamptz, ${values.afterOriginal}::timestamptz)`);
    }
    const movedRows = db
      .selectFrom(moved.orderBy(movedStart).orderBy('instance_start').limit(values.limit).as('m'))
      .select(EXCEPTION_COLUMNS.map((column) => `m.${column}` as const))
      .select(sql<boolean>`true`.as('moved_branch'));
    if (!slots) return movedRows;
    return db
      .selectFrom('event_exceptions')
      .select(EXCEPTION_COLUMNS)
      .select(sql<boolean>`false`.as('moved_branch'))
      .where('event_id', '=', values.eventId)
      .where('instance_start', '>=', values.slotsFrom!)
      .where('instance_start', '<=', values.slotsTo!)
      .unionAll(movedRows);
  },
);

/** The times of every exception of one event that moves its occurrence. */
export async function movedExceptionsOf(db: Db, eventId: string): Promise<Pick<EventExceptionRow, 'instance_start' | 'starts_at' | 'ends_at'>[]> {
  return db
    .selectFrom('event_exceptions')
    .select(['instance_start', 'starts_at', 'ends_at'])
    .where('event_id', '=', eventId)
    .where((eb) => eb.or([eb('starts_at', 'is not', null), eb('ends_at', 'is not', null)]))
    .execute();
}

/**
 * The event's times, its row locked until the transaction ends: writes of its span wait for one
 * another, so each reads the exceptions the other committed. `for no key update` does not wait for
 * the key-share locks that inserting an exception takes on its event.
 */
export async function lockEventTimes(db: Db, eventId: string): Promise<EventRow | undefined> {
  return db.selectFrom('events').select(EVENT_COLUMNS).where('id', '=', eventId).forNoKeyUpdate().executeTakeFirst();
}

/** The exceptions of one event whose original start lies in [from, to] (both optional). */
export async function exceptionsBetween(db: Db, eventId: string, from?: Date, to?: Date): Promise<EventExceptionRow[]> {
  let query = db.selectFrom('event_exceptions').select(EXCEPTION_COLUMNS).where('event_id', '=', eventId);
  if (from) query = query.where('instance_start', '>=', from);
  if (to) query = query.where('instance_start', '<=', to);
  return executePrepared(db, query.orderBy('instance_start'));
}

export async function findException(db: Db, eventId: string, instanceStart: Date): Promise<EventExceptionRow | undefined> {
  return db.selectFrom('event_exceptions').selectAll().where('event_id', '=', eventId).where('instance_start', '=', instanceStart).executeTakeFirst();
}

/** Creates the occurrence's exception or changes the given fields of the existing one. */
export async function upsertException(db: Db, row: NewEventExceptionRow): Promise<EventExceptionRow> {
  const { event_id: _e, instance_start: _i, created_by: _c, created_at: _ca, ...changes } = row;
  return db
    .insertInto('event_exceptions')
    .values(row)
    .onConflict((oc) => oc.columns(['event_id', 'instance_start']).doUpdateSet({ ...changes, updated_at: sql`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteExceptions(db: Db, eventId: string): Promise<void> {
  await db.deleteFrom('event_exceptions').where('event_id', '=', eventId).execute();
}

/** The event with the caller's invite (`my_invitee`, null when none or banned from its room). */
export async function findEventWithMyInvite(db: Db, userId: string, eventId: string) {
  return db
    .selectFrom('events')
    .leftJoin('event_invites as my_invite', (join) =>
      join
        .onRef('my_invite.event_id', '=', 'events.id')
        .on('my_invite.invitee', '=', userId)
        .on(notBannedFrom(sql.ref('events.room_id'), userId)),
    )
    .selectAll('events')
    .select('my_invite.invitee as my_invitee')
    .where('events.id', '=', eventId)
    .executeTakeFirst();
}

/** The room an event is created with; answers its id. */
export async function insertEventRoom(db: Db, values: NewRoomRow): Promise<{ id: string }> {
  return db.insertInto('rooms').values(values).returning('id').executeTakeFirstOrThrow();
}

export async function insertEvent(db: Db, values: NewEventRow): Promise<EventRow> {
  return db.insertInto('events').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function updateEvent(db: Db, eventId: string, patch: EventPatch): Promise<void> {
  await db.updateTable('events').set(patch).where('id', '=', eventId).execute();
}

export async function updateEventRoom(db: Db, roomId: string, patch: RoomPatch): Promise<void> {
  await db.updateTable('rooms').set(patch).where('id', '=', roomId).execute();
}

/**
 * Deletes the event; its trigger deletes the room, and the cascades everything of both. Answers
 * the storage keys of the room's assets, whose bytes the caller removes after the commit. The room
 * row lock (as rooms' own delete takes it) waits for uploads in flight and holds off new ones, so
 * the keys read are all the keys the cascade deletes.
 */
export async function deleteEventReturningAssetKeys(db: Db, eventId: string, roomId: string): Promise<string[]> {
  await db.selectFrom('rooms').select('id').where('id', '=', roomId).forUpdate().execute();
  const assets = await db.selectFrom('assets').select('storage_key').where('room_id', '=', roomId).execute();
  await db.deleteFrom('events').where('id', '=', eventId).execute();
  return assets.map((asset) => asset.storage_key);
}

/** True when the event became a favorite, false when it already was one. */
export async function addFavorite(db: Db, userId: string, eventId: string): Promise<boolean> {
  const row = await db
    .insertInto('event_favorites')
    .values({ user_id: userId, event_id: eventId })
    .onConflict((oc) => oc.columns(['user_id', 'event_id']).doNothing())
    .returning('event_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** True when the event was a favorite. */
export async function removeFavorite(db: Db, userId: string, eventId: string): Promise<boolean> {
  const result = await db.deleteFrom('event_favorites').where('user_id', '=', userId).where('event_id', '=', eventId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Ad-hoc events created before `createdBefore`, oldest first: the ones `convene cleanup` removes. */
export async function listAdhocEventsCreatedBefore(db: Db, createdBefore: Date): Promise<Array<Pick<EventRow, 'id' | 'room_id' | 'title' | 'created_at'>>> {
  return db
    .selectFrom('events')
    .select(['id', 'room_id', 'title', 'created_at'])
    .where('is_adhoc', '=', true)
    .where('created_at', '<', createdBefore)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
