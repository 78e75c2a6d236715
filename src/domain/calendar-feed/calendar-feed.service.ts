/**
 * A user's calendar feed (issue 20): issuing, rotating and revoking its secret URL, and writing the
 * feed itself. The feed reuses the invitation mails' iCalendar writer (notifications/ics.ts), so a
 * meeting looks the same in a calendar whether it came by mail or by subscription (same UID).
 *
 * Kept minimal because a feed URL may leak (it is a credential in a URL, pasted into calendar
 * programs and synced to other services): title, description, times, organizer and status; no
 * room password, invite code, call-in pin, stream key or invitee list.
 */
import { createHash } from 'node:crypto';
import type { Config } from '../../config/schema.js';
import type { Db, EventExceptionRow } from '../../db/schema.js';
import { errors } from '../../errors.js';
import type { Clock } from '../clock.js';
import { scheduleOf } from '../events/event-times.js';
import { calendarException } from '../notifications/event-mail.js';
import { buildFeed, type CalendarTimes, type FeedEntry } from '../notifications/ics.js';
import { DAY_MS } from '../time/zones.js';
import {
  deleteFeedOf,
  feedEvents,
  feedExceptions,
  feedOwner,
  feedTokenHash,
  findFeedOf,
  newFeedToken,
  replaceFeed,
  type FeedEventRow,
} from './calendar-feeds.repository.js';

/** How often calendar programs should fetch the feed again (RFC 7986 REFRESH-INTERVAL). */
const REFRESH = 'PT1H';
const CALENDAR_NAME = 'Convene meetings';

export interface RenderedFeed {
  text: string;
  /** A strong validator of `text` (quoted, as the ETag header carries it). */
  etag: string;
}

export function createCalendarFeedService({ db, config, clock }: { db: Db; config: Config; clock: Clock }) {
  return {
    /** A new secret for the user's feed, replacing any earlier one. The token is answered once and never stored. */
    async issue(userId: string): Promise<{ token: string; createdAt: Date }> {
      const token = newFeedToken();
      return { token, createdAt: await replaceFeed(db, userId, feedTokenHash(token)) };
    },

    async get(userId: string): Promise<{ createdAt: Date }> {
      const feed = await findFeedOf(db, userId);
      if (!feed) throw errors.notFound();
      return { createdAt: feed.created_at };
    },

    async revoke(userId: string): Promise<void> {
      if (!(await deleteFeedOf(db, userId))) throw errors.notFound();
    },

    /** The feed of the token's user; 404 for an unknown or revoked token (or a disabled user). */
    async render(token: string): Promise<RenderedFeed> {
      const owner = await feedOwner(db, feedTokenHash(token));
      if (!owner) throw errors.notFound();
      const now = clock();
      const from = new Date(now - config.calendar_feed.past_days * DAY_MS);
      const rows = await feedEvents(db, owner.id, from, config.calendar_feed.max_events);
      const exceptions = groupByEvent(
        await feedExceptions(
          db,
          rows.map((row) => row.id),
        ),
      );
      const entries = rows.flatMap((row) => feedEntry(row, exceptions.get(row.id) ?? []) ?? []);
      const header = [`NAME:${CALENDAR_NAME}`, `X-WR-CALNAME:${CALENDAR_NAME}`, `REFRESH-INTERVAL;VALUE=DURATION:${REFRESH}`, `X-PUBLISHED-TTL:${REFRESH}`];
      // VTIMEZONE rules as of this year: the feed is about the meetings around now
      const text = buildFeed(entries, header, new Date(now).getUTCFullYear());
      return { text, etag: `"${createHash('sha256').update(text).digest('base64url').slice(0, 32)}"` };
    },
  };
}

export type CalendarFeedService = ReturnType<typeof createCalendarFeedService>;

function groupByEvent(rows: readonly EventExceptionRow[]): Map<string, EventExceptionRow[]> {
  const byEvent = new Map<string, EventExceptionRow[]>();
  for (const row of rows) {
    const list = byEvent.get(row.event_id);
    if (list) list.push(row);
    else byEvent.set(row.event_id, [row]);
  }
  return byEvent;
}

function feedEntry(row: FeedEventRow, exceptions: readonly EventExceptionRow[]): FeedEntry | undefined {
  const s = scheduleOf(row);
  if (!s) return undefined;
  const times: CalendarTimes = { isAllDay: s.isAllDay, start: s.startsAt, startZone: s.startsTz, end: s.endsAt, endZone: s.endsTz };
  // DTSTAMP of an object without METHOD is when the event last changed (RFC 5545 §3.8.7.2): the
  // feed's bytes, and so its ETag, stay the same while nothing changes
  const lastModified = new Date(Math.max(row.updated_at.getTime(), ...exceptions.map((x) => x.updated_at.getTime())));
  return {
    status: row.my_status === 'pending' || row.my_status === 'tentative' ? 'TENTATIVE' : 'CONFIRMED',
    lastModified,
    event: {
      eventId: row.id,
      title: row.title,
      description: row.description,
      times,
      pattern: row.recurrence_pattern,
      exceptions: exceptions.map((x) => calendarException(x, times)),
      sequence: row.ical_sequence,
      organizer: { email: row.creator_email, name: row.creator_name },
      attendees: [],
    },
  };
}

/** `If-None-Match` matches `etag`: one of its listed tags (weak ones compared weakly, RFC 9110 §13.1.2), or `*`. */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}
