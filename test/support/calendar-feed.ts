/**
 * A calendar feed read by two independent parsers: ical.js (Mozilla's, which converts zoned times
 * with the feed's own VTIMEZONEs) and node-ical (its own parser, recurrences by rrule-temporal,
 * zones from the runtime's tz database by TZID). Each expands every event's occurrences (changed
 * ones moved, cancelled ones left out), as [start, end] in UTC ISO form, by UID.
 */
import ICAL from 'ical.js';
import nodeIcal from 'node-ical';
import { expect } from 'vitest';
import type { TestApp, TestUser } from './test-app.js';

export type Occurrence = [start: string, end: string];

/** Issues (or rotates) the user's feed; answers its URL's path on the test app and its token. */
export async function issueFeed(app: TestApp, user: TestUser): Promise<{ path: string; token: string; url: string }> {
  const res = await app.request('POST', '/v1/users/me/calendar_feed', { headers: { authorization: `Bearer ${user.accessToken}` } });
  expect(res.status, res.text_).toBe(201);
  const { url } = JSON.parse(res.text_) as { url: string };
  const path = new URL(url).pathname;
  return { path, token: path.split('/')[3]!, url };
}

/** Reads a feed; fails unless it answers 200 text/calendar. */
export async function readFeed(app: TestApp, path: string): Promise<string> {
  const res = await app.request('GET', path);
  expect(res.status, res.text_).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
  return res.text_;
}

/** ical.js: the VCALENDAR, its VTIMEZONEs registered in place of any registered before (so the feed's own are used). */
export function icalJsCalendar(text: string): ICAL.Component {
  const calendar = new ICAL.Component(ICAL.parse(text));
  for (const zone of calendar.getAllSubcomponents('vtimezone')) {
    const tz = new ICAL.Timezone(zone);
    ICAL.TimezoneService.remove(tz.tzid);
    ICAL.TimezoneService.register(tz);
  }
  return calendar;
}

/** ical.js's occurrences of every event starting before `until`, by UID. */
export function icalJsOccurrences(text: string, until: Date): Map<string, Occurrence[]> {
  const calendar = icalJsCalendar(text);
  const byUid = new Map<string, ICAL.Event[]>();
  for (const vevent of calendar.getAllSubcomponents('vevent')) {
    const event = new ICAL.Event(vevent);
    byUid.set(event.uid, [...(byUid.get(event.uid) ?? []), event]);
  }
  const out = new Map<string, Occurrence[]>();
  for (const [uid, events] of byUid) {
    const master = events.find((e) => !e.isRecurrenceException())!;
    for (const override of events.filter((e) => e.isRecurrenceException())) master.relateException(override);
    const found: Occurrence[] = [];
    const iterator = master.iterator();
    for (let next = iterator.next(); next && next.toJSDate() < until; next = iterator.next()) {
      const details = master.getOccurrenceDetails(next);
      found.push([details.startDate.toJSDate().toISOString(), details.endDate.toJSDate().toISOString()]);
    }
    out.set(uid, found.sort(byStart));
  }
  return out;
}

/** node-ical's occurrences of every event within [from, until], by UID. */
export function nodeIcalOccurrences(text: string, from: Date, until: Date): Map<string, Occurrence[]> {
  const parsed = nodeIcal.sync.parseICS(text);
  const out = new Map<string, Occurrence[]>();
  for (const component of Object.values(parsed)) {
    if (component?.type !== 'VEVENT') continue;
    const event = component;
    const instances = nodeIcal.expandRecurringEvent(event, { from, to: until });
    out.set(event.uid, instances.map((i): Occurrence => [new Date(i.start).toISOString(), new Date(i.end).toISOString()]).sort(byStart));
  }
  return out;
}

const byStart = (a: Occurrence, b: Occurrence) => a[0].localeCompare(b[0]);
