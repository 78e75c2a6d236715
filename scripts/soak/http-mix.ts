// The soak's HTTP load, beside its signaling rooms: a few workers, each running one operation after
// another, drawn by weight from reads and writes of rooms, events, invite codes and signaling
// tickets. Every answer is checked against the contract (test/support/contract.ts); its status
// must be the one the operation succeeds with, or the refusal a deliberately bad request provokes
// (an unknown room's 404, an empty patch's 400), which are counted apart.
import type { OperationId } from '../../generated/operations.js';
import { checkResponse } from '../../test/support/contract.js';
import { Counter, freshSource, Problems, sleep } from './record.js';

export interface MixRoom {
  roomId: string;
  /** Its owner's access token. */
  token: string;
}

export interface HttpMixSetup {
  url: string;
  /** The signaling rooms: read and given invite codes, never changed (a waiting room would hold their joiners back). */
  signalingRooms: MixRoom[];
  /** Rooms of the mix's own, which it patches and starts. */
  ownRooms: MixRoom[];
  random: () => number;
}

export interface HttpFigures {
  /** Requests by `operationId status`. */
  requests: Counter;
  /** Answers that were the refusal a request meant to provoke. */
  provoked: number;
  problems: Problems;
}

const UNKNOWN_ROOM = '00000000-0000-4000-8000-000000000000';

export function httpFigures(problems: Problems): HttpFigures {
  return { requests: new Counter(), provoked: 0, problems };
}

/** Runs `workers` request loops until `stopping()`; resolves when the last request has been answered. */
export async function runHttpMix(setup: HttpMixSetup, figures: HttpFigures, stopping: () => boolean, workers: number): Promise<void> {
  const { random } = setup;
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]!;

  async function call(op: OperationId, method: string, path: string, init: { token?: string; body?: unknown; expect: number; provoked?: boolean }) {
    const headers: Record<string, string> = { 'x-forwarded-for': freshSource(), ...(init.token ? { authorization: `Bearer ${init.token}` } : {}) };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${setup.url}/v1${path}`, { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
    const text = await response.text();
    figures.requests.add(`${op} ${response.status}`);
    try {
      checkResponse(op, { status: response.status, contentType: response.headers.get('content-type'), body: text });
    } catch (err) {
      figures.problems.add(`HTTP ${method} ${path}: ${(err as Error).message}`);
    }
    if (response.status !== init.expect) {
      figures.problems.add(`HTTP ${method} ${path} answered ${response.status}, not ${init.expect}: ${text.slice(0, 300)}`);
      return undefined;
    }
    if (init.provoked) figures.provoked++;
    return text ? JSON.parse(text) : undefined;
  }

  const start = () => new Date(Date.UTC(2027, Math.floor(random() * 12), 1 + Math.floor(random() * 28), 8 + Math.floor(random() * 8)));
  const operations: Array<[weight: number, run: () => Promise<unknown>]> = [
    [3, () => call('get_rooms', 'GET', '/rooms?per_page=10', { token: pick(setup.signalingRooms).token, expect: 200 })],
    [
      3,
      () => {
        const room = pick(setup.signalingRooms);
        return call('get_room', 'GET', `/rooms/${room.roomId}`, { token: room.token, expect: 200 });
      },
    ],
    [
      2,
      () => {
        const room = pick(setup.ownRooms);
        return call('patch_room', 'PATCH', `/rooms/${room.roomId}`, { token: room.token, body: { waiting_room: random() < 0.5 }, expect: 200 });
      },
    ],
    [
      2,
      async () => {
        // an event's life: created, read, renamed, deleted (so that the database does not grow without bound)
        const { token } = pick(setup.ownRooms);
        const startsAt = start();
        const body = {
          title: 'Soak review',
          description: 'What the soak changed.',
          is_time_independent: false,
          is_all_day: false,
          starts_at: { datetime: startsAt.toISOString(), timezone: 'Europe/Berlin' },
          ends_at: { datetime: new Date(startsAt.getTime() + 3_600_000).toISOString(), timezone: 'Europe/Berlin' },
        };
        const event = await call('create_event', 'POST', '/events', { token, body, expect: 201 });
        if (!event) return;
        await call('get_event', 'GET', `/events/${event.id}`, { token, expect: 200 });
        await call('patch_event', 'PATCH', `/events/${event.id}`, { token, body: { title: 'Soak review, moved' }, expect: 200 });
        await call('delete_event', 'DELETE', `/events/${event.id}`, { token, expect: 204 });
      },
    ],
    [2, () => call('get_events', 'GET', '/events?per_page=10', { token: pick(setup.ownRooms).token, expect: 200 })],
    [
      2,
      async () => {
        // an invite code of a signaling room: created, listed, deleted (the guests' own code stays)
        const room = pick(setup.signalingRooms);
        const invite = await call('create_room_invite', 'POST', `/rooms/${room.roomId}/invites`, { token: room.token, body: {}, expect: 200 });
        await call('get_room_invites', 'GET', `/rooms/${room.roomId}/invites?per_page=5`, { token: room.token, expect: 200 });
        if (invite) await call('delete_room_invite', 'DELETE', `/rooms/${room.roomId}/invites/${invite.invite_code}`, { token: room.token, expect: 200 });
      },
    ],
    [
      2,
      () => {
        // a ticket nobody redeems: it expires in the store
        const room = pick(setup.ownRooms);
        return call('start_room', 'POST', `/rooms/${room.roomId}/start`, { token: room.token, body: {}, expect: 200 });
      },
    ],
    [1, () => call('get_me', 'GET', '/users/me', { token: pick(setup.ownRooms).token, expect: 200 })],
    [1, () => call('get_room', 'GET', `/rooms/${UNKNOWN_ROOM}`, { token: pick(setup.ownRooms).token, expect: 404, provoked: true })],
    [
      1,
      () => {
        const room = pick(setup.ownRooms);
        return call('patch_room', 'PATCH', `/rooms/${room.roomId}`, { token: room.token, body: {}, expect: 400, provoked: true });
      },
    ],
  ];
  const totalWeight = operations.reduce((sum, [weight]) => sum + weight, 0);
  const draw = () => {
    let left = random() * totalWeight;
    for (const [weight, run] of operations) if ((left -= weight) < 0) return run;
    return operations[0]![1];
  };

  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (!stopping()) {
        try {
          await draw()();
        } catch (err) {
          figures.problems.add(`HTTP request failed: ${(err as Error).message}`);
        }
        // a paced mix, not a benchmark: it shares the two cores with a thousand sockets
        await sleep(5 + random() * 25);
      }
    }),
  );
}
