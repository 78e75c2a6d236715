/**
 * Fixtures of the event tests (test/integration/events): request bodies of timed and
 * time-independent events, raw requests of the ten event operations (every answer is checked
 * against the contract by the test app), and invitations written straight into the database.
 */
import { expect } from 'vitest';
import type { components } from '../../generated/openapi.js';
import type { EventInviteStatus } from '../../src/db/schema.js';
import type { TestApp, TestUser } from './test-app.js';

type Schemas = components['schemas'];
export type Event = Schemas['Event'];
export type EventInstance = Schemas['EventInstance'];
export type EventListItem = Schemas['EventListItem'];
export type EventException = Schemas['EventException'];

export const BERLIN = 'Europe/Berlin';

/** A one-hour timed event on 2026-12-01 09:00 UTC (10:00 in Berlin), plus the overrides. */
export function timedBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    title: 'Weekly planning',
    description: 'Plans for the coming week.',
    is_time_independent: false,
    is_all_day: false,
    starts_at: { datetime: '2026-12-01T09:00:00Z', timezone: BERLIN },
    ends_at: { datetime: '2026-12-01T10:00:00Z', timezone: BERLIN },
    ...overrides,
  };
}

export function timeIndependentBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { title: 'Open door', description: '', is_time_independent: true, ...overrides };
}

/** `datetime` in `zone` as DateTimeTz. */
export const at = (datetime: string, timezone = BERLIN) => ({ datetime, timezone });

export interface Sent {
  status: number;
  json: any;
  link: string | null;
}

/** A raw request with an optional Bearer token and JSON body. */
export async function send(app: TestApp, method: string, path: string, init: { token?: string; body?: unknown; raw?: string } = {}): Promise<Sent> {
  const headers: Record<string, string> = {};
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const payload = init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body));
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const res = await app.request(method, `/v1${path}`, { headers, body: payload });
  return { status: res.status, json: res.text_ ? JSON.parse(res.text_) : undefined, link: res.headers.get('link') };
}

/** Creates an event through the API; fails the test unless the answer is 201. */
export async function createEvent(app: TestApp, user: TestUser, body: Record<string, unknown> = timedBody(), query = ''): Promise<Event> {
  const res = await send(app, 'POST', `/events${query}`, { token: user.accessToken, body });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json as Event;
}

/** An invitation of `user` in the given state, written directly (the invite operations are another issue's). */
/** The last `created_at` `invite` wrote: each invite gets a later one, so that invites keep the order they were made in. */
let lastInviteAt = 0;

export async function invite(app: TestApp, eventId: string, creator: TestUser, user: TestUser, status: EventInviteStatus = 'pending'): Promise<void> {
  // two inserts within one millisecond (PGlite's clock) would tie and fall back to the invitee's random id
  lastInviteAt = Math.max(Date.now(), lastInviteAt + 1);
  await app.convene.database.db
    .insertInto('event_invites')
    .values({ event_id: eventId, invitee: user.id, status, created_by: creator.id, created_at: new Date(lastInviteAt) })
    .execute();
}

/** The `after` cursor of a `Link: <…after=CURSOR>; rel="after"` header, or undefined. */
export function afterCursor(link: string | null): string | undefined {
  if (!link) return undefined;
  const match = /<([^>]+)>; rel="after"/.exec(link);
  return match ? (new URL(match[1]!).searchParams.get('after') ?? undefined) : undefined;
}

/** Walks every page of a cursor-paginated list; answers all items in order and the number of pages. */
export async function allPages(app: TestApp, token: string, firstPath: string): Promise<{ items: any[]; pages: number }> {
  const items: any[] = [];
  let path: string | undefined = firstPath;
  let pages = 0;
  while (path) {
    const res = await send(app, 'GET', path, { token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    items.push(...res.json);
    pages++;
    const cursor = afterCursor(res.link);
    if (cursor) {
      const next: URL = new URL(`http://x/v1${path}`);
      next.searchParams.set('after', cursor);
      path = `${next.pathname.replace(/^\/v1/, '')}${next.search}`;
    } else path = undefined;
    if (pages > 1000) throw new Error('pagination does not end');
  }
  return { items, pages };
}
