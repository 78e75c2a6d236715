/**
 * The timer store's contract, run against the in-process store and, when REDIS_URL is set, against
 * two Redis stores on separate connections (two instances): one timer per room under concurrent
 * starts, a take that exactly one of many racing takers wins, and ready statuses that never outlive
 * their timer; and, in Redis, keys that the take deletes and that expire on their own otherwise.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningTimer, TimerStore } from '../../../src/signaling/modules/timer/timer-store.js';
import { createLocalTimerStore } from '../../../src/signaling/modules/timer/timer-store.local.js';
import { COUNTDOWN_KEY_GRACE_MS, createRedisTimerStore, STOPWATCH_KEY_TTL_MS } from '../../../src/signaling/modules/timer/timer-store.redis.js';

const redisUrl = process.env.REDIS_URL || undefined;
const clients: Redis[] = [];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.quit()));
});

/** Each subject: the stores of the instances sharing one state. */
const subjects: [string, () => TimerStore[]][] = [['local', () => [createLocalTimerStore()]]];
if (redisUrl) {
  subjects.push([
    'redis',
    () => {
      const [a, b] = [new Redis(redisUrl), new Redis(redisUrl)];
      clients.push(a, b);
      return [createRedisTimerStore(a), createRedisTimerStore(b)];
    },
  ]);
} else {
  console.log('REDIS_URL is not set: the Redis timer store is not tested in this run');
}

const countdown = (overrides: Partial<RunningTimer> = {}): RunningTimer => ({
  timer_id: randomUUID(),
  kind: 'countdown',
  started_at: '2026-05-04T09:29:00.000Z',
  ends_at: '2026-05-04T09:30:00.000Z',
  title: 'Research timer',
  style: 'normal',
  ready_check_enabled: true,
  creator: randomUUID(),
  ...overrides,
});

describe.each(subjects)('%s timer store', (_name, make) => {
  const instances = make();
  const [store] = instances as [TimerStore];
  const other = instances.at(-1)!;
  const nth = (i: number) => instances[i % instances.length]!;

  // every test uses fresh room ids; the timers left in them are taken afterwards (off Redis)
  const rooms: string[] = [];
  const room = () => {
    const id = randomUUID();
    rooms.push(id);
    return id;
  };
  const takeLeftover = async (roomId: string) => {
    const timer = await store.get(roomId);
    if (timer) await store.take(roomId, timer.timer_id);
  };
  afterEach(async () => {
    await Promise.all(rooms.splice(0).map(takeLeftover));
  });

  it('keeps the one timer of a room, as it was created, for every instance', async () => {
    const roomId = room();
    expect(await store.get(roomId)).toBeUndefined();
    const timer = countdown();
    expect(await store.create(roomId, timer)).toBe(true);
    expect(await other.get(roomId)).toEqual(timer);
    expect(await other.create(roomId, countdown())).toBe(false);
    expect(await store.get(roomId)).toEqual(timer);
  });

  it('keeps a stopwatch without the optional fields as it is', async () => {
    const roomId = room();
    const { ends_at: _e, title: _t, style: _s, ...stopwatch } = countdown({ kind: 'stopwatch', ready_check_enabled: false });
    await store.create(roomId, stopwatch);
    expect(await other.get(roomId)).toStrictEqual(stopwatch);
  });

  it('keeps, takes and answers ready statuses of a timer whose title holds an unpaired surrogate', async () => {
    // JSON.stringify writes it as the escape "\udfff", which the Redis scripts' cjson once refused:
    // the timer could then be neither stopped nor expired
    const roomId = room();
    const timer = countdown({ title: 'a\udfffb', style: '\ud800' });
    expect(await store.create(roomId, timer)).toBe(true);
    expect(await other.get(roomId)).toEqual(timer);
    expect(await other.setReadyStatus(roomId, timer.timer_id, 'p1', true)).toBe(true);
    expect(await store.take(roomId, timer.timer_id)).toBe(true);
    expect(await other.get(roomId)).toBeUndefined();
  });

  it('keeps rooms apart', async () => {
    const [first, second] = [room(), room()];
    const timers = [countdown(), countdown()] as const;
    expect(await store.create(first, timers[0])).toBe(true);
    expect(await store.create(second, timers[1])).toBe(true);
    await store.setReadyStatus(first, timers[0].timer_id, 'p1', true);
    expect(await store.take(second, timers[0].timer_id)).toBe(false);
    expect(await store.take(second, timers[1].timer_id)).toBe(true);
    expect(await store.get(first)).toEqual(timers[0]);
    expect(await store.readyStatuses(first, ['p1'])).toEqual(new Map([['p1', true]]));
  });

  it('lets exactly one of many concurrent starts on every instance create the timer', async () => {
    const roomId = room();
    const timers = Array.from({ length: 20 }, () => countdown());
    const created = await Promise.all(timers.map((timer, i) => nth(i).create(roomId, timer)));
    expect(created.filter(Boolean)).toHaveLength(1);
    expect(await store.get(roomId)).toEqual(timers[created.indexOf(true)]);
  });

  it('takes the timer only by its id, once, with its ready statuses', async () => {
    const roomId = room();
    const timer = countdown();
    await store.create(roomId, timer);
    await store.setReadyStatus(roomId, timer.timer_id, 'p1', true);
    expect(await other.take(roomId, randomUUID())).toBe(false);
    expect(await store.get(roomId)).toEqual(timer);

    expect(await other.take(roomId, timer.timer_id)).toBe(true);
    expect(await store.get(roomId)).toBeUndefined();
    expect(await store.readyStatuses(roomId, ['p1'])).toEqual(new Map());
    expect(await store.take(roomId, timer.timer_id)).toBe(false);
  });

  it('lets exactly one of many concurrent takes on every instance take the timer', async () => {
    const roomId = room();
    const timer = countdown();
    await store.create(roomId, timer);
    const taken = await Promise.all(Array.from({ length: 20 }, (_, i) => nth(i).take(roomId, timer.timer_id)));
    expect(taken.filter(Boolean)).toHaveLength(1);
    expect(await store.get(roomId)).toBeUndefined();
  });

  it('does not let a take of an older timer end the one running now', async () => {
    const roomId = room();
    const older = countdown();
    await store.create(roomId, older);
    await store.take(roomId, older.timer_id);
    const newer = countdown();
    await store.create(roomId, newer);
    expect(await other.take(roomId, older.timer_id)).toBe(false);
    expect(await store.get(roomId)).toEqual(newer);
  });

  it('records ready statuses of the running timer with a ready check, for every instance', async () => {
    const roomId = room();
    const timer = countdown();
    await store.create(roomId, timer);
    expect(await store.setReadyStatus(roomId, timer.timer_id, 'p1', true)).toBe(true);
    expect(await other.setReadyStatus(roomId, timer.timer_id, 'p2', false)).toBe(true);
    expect(await other.readyStatuses(roomId, ['p1', 'p2', 'p3'])).toEqual(
      new Map([
        ['p1', true],
        ['p2', false],
      ]),
    );
    expect(await store.setReadyStatus(roomId, timer.timer_id, 'p1', false)).toBe(true);
    expect(await store.readyStatuses(roomId, ['p1'])).toEqual(new Map([['p1', false]]));
    expect(await store.readyStatuses(roomId, [])).toEqual(new Map());
  });

  it('records no ready status without a timer, for another timer, or without a ready check', async () => {
    const roomId = room();
    expect(await store.setReadyStatus(roomId, randomUUID(), 'p1', true)).toBe(false);
    const timer = countdown({ ready_check_enabled: false });
    await store.create(roomId, timer);
    expect(await store.setReadyStatus(roomId, timer.timer_id, 'p1', true)).toBe(false);
    await store.take(roomId, timer.timer_id);
    const checked = countdown();
    await store.create(roomId, checked);
    expect(await other.setReadyStatus(roomId, timer.timer_id, 'p1', true)).toBe(false);
    expect(await store.readyStatuses(roomId, ['p1'])).toEqual(new Map());
  });

  it('deletes one participant’s ready status', async () => {
    const roomId = room();
    const timer = countdown();
    await store.create(roomId, timer);
    await store.setReadyStatus(roomId, timer.timer_id, 'p1', true);
    await store.setReadyStatus(roomId, timer.timer_id, 'p2', true);
    await other.deleteReadyStatus(roomId, 'p1');
    expect(await store.readyStatuses(roomId, ['p1', 'p2'])).toEqual(new Map([['p2', true]]));
    await other.deleteReadyStatus(roomId, 'nobody');
    await other.deleteReadyStatus(room(), 'p2');
    expect(await store.readyStatuses(roomId, ['p2'])).toEqual(new Map([['p2', true]]));
  });

  it('hands out copies that do not change what is stored', async () => {
    const roomId = room();
    const timer = countdown();
    await store.create(roomId, timer);
    timer.title = 'changed after create';
    const read = (await store.get(roomId))!;
    read.kind = 'stopwatch';
    expect(await other.get(roomId)).toMatchObject({ title: 'Research timer', kind: 'countdown' });
  });
});

describe.runIf(redisUrl)('redis timer store keys', () => {
  let redis: Redis;
  let store: TimerStore;
  beforeAll(() => {
    redis = new Redis(redisUrl!);
    clients.push(redis);
    store = createRedisTimerStore(redis);
  });
  const keysOf = (roomId: string) => [`convene:signaling:room:${roomId}:timer`, `convene:signaling:room:${roomId}:timer_ready`] as const;
  const stopwatch = (): RunningTimer => {
    const { ends_at: _, ...timer } = countdown({ kind: 'stopwatch' });
    return timer;
  };

  it('are both deleted by the take that ends the timer', async () => {
    const roomId = randomUUID();
    const timer = countdown();
    await store.create(roomId, timer);
    await store.setReadyStatus(roomId, timer.timer_id, 'p1', true);
    expect(await redis.exists(...keysOf(roomId))).toBe(2);
    await store.take(roomId, timer.timer_id);
    expect(await redis.exists(...keysOf(roomId))).toBe(0);
  });

  it.each([
    ['a countdown’s', countdown, 60_000 + COUNTDOWN_KEY_GRACE_MS],
    ['a stopwatch’s', stopwatch, STOPWATCH_KEY_TTL_MS],
  ])('expire on their own when nobody takes the timer: %s', async (_what, make, lifetimeMs) => {
    const roomId = randomUUID();
    const timer = make();
    await store.create(roomId, timer);
    await store.setReadyStatus(roomId, timer.timer_id, 'p1', true);
    const [timerKey, readyKey] = keysOf(roomId);
    const [timerTtl, readyTtl] = [await redis.pttl(timerKey), await redis.pttl(readyKey)];
    // a loaded machine may take a while between the commands: a few seconds of slack
    expect(timerTtl).toBeGreaterThan(lifetimeMs - 5_000);
    expect(timerTtl).toBeLessThanOrEqual(lifetimeMs);
    // the statuses expire with the timer (read a moment later, within a millisecond of rounding)
    expect(readyTtl).toBeGreaterThan(timerTtl - 5_000);
    expect(readyTtl).toBeLessThanOrEqual(timerTtl + 1);
    await store.take(roomId, timer.timer_id);
  });
});
