/**
 * Events (issue 5): create (with its own room and SIP config), read, change and delete an event,
 * list the caller's events with keyset pagination, list and change its occurrences, and favorites.
 * Who may do what is the shared rule of `event-access.ts`: creator and invitees read, only the
 * creator writes, everyone else gets 404.
 */
import type { components } from '../../../generated/openapi.js';
import type { Config } from '../../config/schema.js';
import type { Db, EventExceptionRow, EventInviteStatus, EventPatch, RoomPatch } from '../../db/schema.js';
import { errors } from '../../errors.js';
import type { AssetStorage } from '../assets/asset-storage.js';
import { queueEventNotification } from '../notifications/outbox.js';
import { queueEventWebhook } from '../webhooks/domain-events.js';
import { createSipConfig } from '../sip/sip-configs.repository.js';
import { replaceRoomStreamingTargets } from '../streaming/streaming-targets.service.js';
import { toPublicProfile, type PublicUserProfile, type User } from '../users/user.js';
import { decodeInstancePosition, decodeListPosition, encodeInstancePosition, encodeListPosition, type CursorCodec } from './cursor.js';
import { mayRead, requireEventAccess, requireEventCreator } from './event-access.js';
import { instant } from '../time/instants.js';
import { NO_TIMES, checkOccurrenceTimes, checkTimeZone, createdSchedule, patchedSchedule, scheduleColumns, scheduleOf } from './event-times.js';
import { toEvent, toException, toInstance, type Event, type EventInstance, type EventListItem, type ViewContext } from './event-view.js';
import * as repo from './events.repository.js';
import { occurrencePage } from './instance-listing.js';
import { isOccurrenceOf, spanOf } from './instances.js';
import { firstInviteesOf, type Invitee } from './invitees.js';
import { parseInstanceId } from './recurrence.js';

type Schemas = components['schemas'];
type Caller = User;

export interface EventListQuery {
  time_min?: string;
  time_max?: string;
  invitees_max?: number;
  per_page?: number;
  after?: string;
  favorites?: boolean;
  adhoc?: boolean;
  time_independent?: boolean;
  invite_status?: string;
}

export interface InstanceListQuery {
  time_min?: string;
  time_max?: string;
  invitees_max?: number;
  per_page?: number;
  /** The cursor, whichever of `cursor`/`after` carried it. */
  cursor?: string;
  /** The name of the parameter the cursor came in, for the error. */
  cursorParam?: string;
}

/** One page and, while more follow, the cursor of the next. */
export interface CursorPage<T> {
  items: T[];
  next?: string;
}

export interface EventService {
  create(caller: Caller, body: Schemas['EventCreate'], options: { suppressEmail: boolean }): Promise<Event>;
  get(caller: Caller, eventId: string, inviteesMax: number): Promise<Event>;
  patch(caller: Caller, eventId: string, body: Schemas['EventPatch'], options: { inviteesMax: number; suppressEmail: boolean }): Promise<Event>;
  remove(caller: Caller, eventId: string, options: { suppressEmail: boolean }): Promise<void>;
  list(caller: Caller, query: EventListQuery): Promise<CursorPage<EventListItem>>;
  instances(caller: Caller, eventId: string, query: InstanceListQuery): Promise<CursorPage<EventInstance>>;
  instance(caller: Caller, eventId: string, instanceId: string, inviteesMax: number): Promise<EventInstance>;
  patchInstance(caller: Caller, eventId: string, instanceId: string, body: Schemas['EventInstancePatch'], inviteesMax: number): Promise<EventInstance>;
  /** True when the event became a favorite, false when it already was one. */
  addFavorite(caller: Caller, eventId: string): Promise<boolean>;
  removeFavorite(caller: Caller, eventId: string): Promise<void>;
}

export interface EventServiceDeps {
  db: Db;
  config: Config;
  /** Signs page cursors; the same on every instance for cursors to work across them (see cursor.ts). */
  cursors: CursorCodec;
  /** Where the bytes of the deleted rooms' assets go away. */
  assetStorage?: Pick<AssetStorage, 'delete'>;
}

const DEFAULT_PER_PAGE = 30;

/**
 * The reference creates a Nextcloud share for `has_shared_folder: true`; Convene has no shared-folder
 * storage, and a client reads `shared_folder` back, so the request is refused rather than dropped.
 */
function refuseSharedFolder(body: { has_shared_folder?: boolean }): void {
  if (body.has_shared_folder === true) {
    throw errors.sharedFolderNotConfigured();
  }
}

const sameLines = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((line, i) => line === b[i]);

export function createEventService({ db, config, cursors, assetStorage }: EventServiceDeps): EventService {
  const avatarBaseUrl = config.users.avatar_base_url;

  // the mails (unless suppressed) and the webhook event (always) of a change, in its transaction
  const notify = async (trx: Db, kind: 'created' | 'updated' | 'cancelled', eventId: string, actorId: string, suppress: boolean) => {
    await queueEventWebhook(trx, `event.${kind}`, eventId);
    await queueEventNotification(trx, { kind, eventId, actorId, suppress, config });
  };

  /**
   * Profiles and invitees for a set of views, in one batch each, and none when not needed: the
   * caller's own profile is at hand, and invitee counts come with the views (so none are counted here).
   */
  async function contextFor(caller: User, rows: repo.EventViewRow[], inviteesMax: number, extraUsers: string[] = []): Promise<ViewContext> {
    const others = [...rows.flatMap((r) => [r.created_by, r.updated_by]), ...extraUsers].filter((id) => id !== caller.id);
    const withInvitees = rows.filter((r) => r.invitee_count > 0);
    const [profiles, invitees] = await Promise.all([
      others.length > 0 ? repo.profilesOf(db, others) : new Map<string, PublicUserProfile>(),
      inviteesMax > 0 && withInvitees.length > 0
        ? firstInviteesOf(
            db,
            withInvitees.map((r) => r.id),
            inviteesMax,
            { avatarBaseUrl },
          )
        : new Map<string, Invitee[]>(),
    ]);
    profiles.set(caller.id, toPublicProfile(caller));
    return { callerId: caller.id, callIn: config.call_in, profiles, invitees };
  }

  /**
   * The event as the caller sees it; 404 when they may not see it. One query: the view row carries
   * the caller's invite, which is all the access rule needs.
   */
  async function readableView(caller: Caller, eventId: string): Promise<repo.EventViewRow> {
    const row = await repo.findEventView(db, caller.id, eventId);
    if (!row || !mayRead(caller.id, row.created_by, row.my_invite_status !== null)) throw errors.notFound();
    return row;
  }

  async function eventAnswer(caller: Caller, eventId: string, inviteesMax: number): Promise<Event> {
    const row = await readableView(caller, eventId);
    return toEvent(row, await contextFor(caller, [row], inviteesMax));
  }

  async function instanceAnswer(
    caller: Caller,
    row: repo.EventViewRow,
    start: Date,
    exception: EventExceptionRow | undefined,
    inviteesMax: number,
  ): Promise<EventInstance> {
    const ctx = await contextFor(caller, [row], inviteesMax, exception ? [exception.created_by] : []);
    return toInstance(row, start, exception, ctx);
  }

  /**
   * Recomputes the event's span (`span_start`/`span_end`, the time range of `GET /events`) from its
   * rule and its moved occurrences, in the transaction that changed either, the event's row locked.
   */
  async function refreshSpan(trx: Db, eventId: string): Promise<void> {
    const event = await repo.lockEventTimes(trx, eventId);
    const schedule = event && scheduleOf(event);
    if (!schedule) return;
    await repo.updateEvent(trx, eventId, spanOf(schedule, event.range_end, await repo.movedExceptionsOf(trx, eventId)));
  }

  /** The original start an instance id names, when it is one of the event's occurrences; else 404. */
  function occurrenceStart(row: repo.EventViewRow, instanceId: string): Date {
    const start = parseInstanceId(instanceId);
    if (!start || !isOccurrenceOf(scheduleOf(row), start)) throw errors.notFound();
    return start;
  }

  return {
    async create(caller, body, { suppressEmail }) {
      refuseSharedFolder(body);
      const schedule = createdSchedule(body);
      const times = schedule ? scheduleColumns(schedule) : NO_TIMES;
      const eventId = await db.transaction().execute(async (trx) => {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- defensive default: the type says present, the check stays as it was
        const room = await repo.insertEventRoom(trx, { created_by: caller.id, password: body.password || null, waiting_room: body.waiting_room ?? false });
        // every event's room can be dialled into (as the reference controller does)
        await createSipConfig(trx, room.id);
        const event = await repo.insertEvent(trx, {
          room_id: room.id,
          created_by: caller.id,
          updated_by: caller.id,
          title: body.title,
          description: body.description,
          is_time_independent: body.is_time_independent,
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- defensive default: the type says present, the check stays as it was
          is_adhoc: body.is_adhoc ?? false,
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- defensive default: the type says present, the check stays as it was
          show_meeting_details: body.show_meeting_details ?? false,
          ...times,
        });
        if (body.streaming_targets) await replaceRoomStreamingTargets(trx, room.id, body.streaming_targets, 'streaming_targets');
        await notify(trx, 'created', event.id, caller.id, suppressEmail);
        return event.id;
      });
      return eventAnswer(caller, eventId, 0);
    },

    get: (caller, eventId, inviteesMax) => eventAnswer(caller, eventId, inviteesMax),

    async patch(caller, eventId, body, { inviteesMax, suppressEmail }) {
      const event = await requireEventCreator(db, caller.id, eventId);
      refuseSharedFolder(body);
      const changes: EventPatch = { updated_by: caller.id, updated_at: new Date() };
      if (body.title !== undefined) changes.title = body.title;
      if (body.description !== undefined) changes.description = body.description;
      if (body.is_adhoc !== undefined) changes.is_adhoc = body.is_adhoc;
      if (body.show_meeting_details !== undefined) changes.show_meeting_details = body.show_meeting_details;
      const room: RoomPatch = {};
      if (body.password !== undefined) room.password = body.password || null;
      if (body.waiting_room !== undefined) room.waiting_room = body.waiting_room;

      let dropExceptions = false;
      const timesTouched = (['is_time_independent', 'is_all_day', 'starts_at', 'ends_at', 'recurrence_pattern'] as const).some((f) => body[f] !== undefined);
      if (timesTouched) {
        const old = scheduleOf(event);
        const next = patchedSchedule(event.is_time_independent, old, body);
        Object.assign(changes, next ? scheduleColumns(next) : NO_TIMES, { is_time_independent: next === undefined });
        // only a changed pattern invalidates the exceptions (docs/decisions.md); no occurrences, no exceptions
        dropExceptions = next === undefined || !sameLines(old?.pattern ?? [], next.pattern);
      }

      await db.transaction().execute(async (trx) => {
        await repo.updateEvent(trx, eventId, changes);
        if (Object.keys(room).length > 0) await repo.updateEventRoom(trx, event.room_id, room);
        if (body.streaming_targets) await replaceRoomStreamingTargets(trx, event.room_id, body.streaming_targets, 'streaming_targets');
        if (dropExceptions) await repo.deleteExceptions(trx, eventId);
        // the columns set the rule's span; the exceptions kept may widen it (or no longer count)
        else if (timesTouched) await refreshSpan(trx, eventId);
        await notify(trx, 'updated', eventId, caller.id, suppressEmail);
      });
      return eventAnswer(caller, eventId, inviteesMax);
    },

    async remove(caller, eventId, { suppressEmail }) {
      const event = await requireEventCreator(db, caller.id, eventId);
      const assetKeys = await db.transaction().execute(async (trx) => {
        // first, while the event and its invitees can still be read for the cancellation
        await notify(trx, 'cancelled', eventId, caller.id, suppressEmail);
        return repo.deleteEventReturningAssetKeys(trx, eventId, event.room_id);
      });
      // after the commit: bytes whose removal fails are orphans, never an asset row without bytes
      // eslint-disable-next-line @typescript-eslint/await-thenable -- without asset storage there is nothing to delete: undefined settles at once
      await Promise.allSettled(assetKeys.map((key) => assetStorage?.delete(key)));
    },

    async list(caller, query) {
      const perPage = query.per_page ?? DEFAULT_PER_PAGE;
      const rows = await repo.listEventViews(db, caller.id, {
        timeMin: query.time_min ? instant(query.time_min, 'time_min') : undefined,
        timeMax: query.time_max ? instant(query.time_max, 'time_max') : undefined,
        favorites: query.favorites === true,
        adhoc: query.adhoc,
        timeIndependent: query.time_independent,
        inviteStatuses: query.invite_status ? (query.invite_status.split(',') as EventInviteStatus[]) : undefined,
        after: query.after ? await decodeListPosition(cursors, query.after) : undefined,
        limit: perPage + 1, // one more tells whether another page follows
      });
      const page = rows.slice(0, perPage);
      const exceptionAuthors = page.flatMap((row) => row.exceptions.map((e) => e.created_by));
      const ctx = await contextFor(caller, page, query.invitees_max ?? 0, exceptionAuthors);
      const items: EventListItem[] = [];
      for (const row of page) {
        items.push(toEvent(row, ctx));
        const schedule = row.exceptions.length > 0 ? scheduleOf(row) : undefined;
        for (const exception of row.exceptions) {
          // an exception whose occurrence a changed start no longer produces describes nothing
          if (isOccurrenceOf(schedule, exception.instance_start)) items.push(toException(row, exception, ctx));
        }
      }
      const last = page.at(-1);
      const next =
        rows.length > perPage && last
          ? await encodeListPosition(cursors, { startsAt: last.starts_at, createdAtKey: last.created_at_key, id: last.id })
          : undefined;
      return { items, next };
    },

    async instances(caller, eventId, query) {
      const row = await readableView(caller, eventId);
      const after = query.cursor ? await decodeInstancePosition(cursors, query.cursor, query.cursorParam ?? 'cursor', eventId) : undefined;
      const page = await occurrencePage(db, eventId, scheduleOf(row), {
        after,
        from: query.time_min ? instant(query.time_min, 'time_min') : undefined,
        to: query.time_max ? instant(query.time_max, 'time_max') : undefined,
        perPage: query.per_page ?? DEFAULT_PER_PAGE,
      });
      const authors = page.items.flatMap((o) => (o.exception ? [o.exception.created_by] : []));
      const ctx = await contextFor(caller, [row], query.invitees_max ?? 0, authors);
      const items = page.items.map((o) => toInstance(row, o.start, o.exception, ctx));
      const last = page.items.at(-1);
      const next = page.more && last ? await encodeInstancePosition(cursors, eventId, { at: last.at, original: last.start }) : undefined;
      return { items, next };
    },

    async instance(caller, eventId, instanceId, inviteesMax) {
      const row = await readableView(caller, eventId);
      const start = occurrenceStart(row, instanceId);
      return instanceAnswer(caller, row, start, await repo.findException(db, eventId, start), inviteesMax);
    },

    async patchInstance(caller, eventId, instanceId, body, inviteesMax) {
      const row = await readableView(caller, eventId);
      if (row.created_by !== caller.id) throw errors.notFound(); // only the creator writes
      const start = occurrenceStart(row, instanceId);
      const existing = await repo.findException(db, eventId, start);

      // the checks of create apply to the occurrence as it will be
      const durationMs = row.ends_at!.getTime() - row.starts_at!.getTime();
      const startsAt = body.starts_at ? instant(body.starts_at.datetime, 'starts_at.datetime') : (existing?.starts_at ?? start);
      const endsAt = body.ends_at ? instant(body.ends_at.datetime, 'ends_at.datetime') : (existing?.ends_at ?? new Date(startsAt.getTime() + durationMs));
      if (body.starts_at) checkTimeZone(body.starts_at.timezone, 'starts_at.timezone');
      if (body.ends_at) checkTimeZone(body.ends_at.timezone, 'ends_at.timezone');
      checkOccurrenceTimes(body.is_all_day ?? existing?.is_all_day ?? row.is_all_day ?? false, startsAt, endsAt);

      const exception = await db.transaction().execute(async (trx) => {
        const upserted = await repo.upsertException(trx, {
          event_id: eventId,
          instance_start: start,
          created_by: caller.id,
          ...(body.status !== undefined ? { status: body.status } : {}),
          ...(body.title !== undefined ? { title: body.title } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.is_all_day !== undefined ? { is_all_day: body.is_all_day } : {}),
          ...(body.starts_at ? { starts_at: startsAt, starts_at_tz: body.starts_at.timezone } : {}),
          ...(body.ends_at ? { ends_at: endsAt, ends_at_tz: body.ends_at.timezone } : {}),
        });
        await refreshSpan(trx, eventId);
        await notify(trx, 'updated', eventId, caller.id, false);
        return upserted;
      });
      return instanceAnswer(caller, row, start, exception, inviteesMax);
    },

    async addFavorite(caller, eventId) {
      await requireEventAccess(db, caller.id, eventId);
      return repo.addFavorite(db, caller.id, eventId);
    },

    async removeFavorite(caller, eventId) {
      await requireEventAccess(db, caller.id, eventId);
      if (!(await repo.removeFavorite(db, caller.id, eventId))) throw errors.notFound('The event is not one of your favorites');
    },
  };
}
