/**
 * Instance liveness on a real Redis (src/redis/instance-liveness.ts): an instance's key lives
 * while it refreshes it and expires once it stops (its connection cut, as in a crash); an instance
 * judges others only after holding its own key a whole lifetime (after Redis was away, the others
 * need that long to set theirs again), never takes itself for dead, notices when its own key was
 * gone (and sets it again), and deletes its key when it closes. Needs REDIS_URL.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceKey, startInstanceLiveness, type InstanceLiveness } from '../../../src/redis/instance-liveness.js';

const redisUrl = process.env.REDIS_URL || undefined;
const TIMING = { ttlMs: 400, refreshMs: 100 };
const logger = pino({ level: 'silent' });

describe.skipIf(!redisUrl)('instance liveness', () => {
  const connections: Redis[] = [];
  const started: InstanceLiveness[] = [];
  let look: Redis;
  beforeAll(() => {
    look = connect();
  });
  afterAll(async () => {
    await Promise.all(started.map((liveness) => liveness.close()));
    await Promise.all(connections.map((connection) => connection.quit().catch(() => connection.disconnect())));
  });

  function connect(): Redis {
    // a connection cut by disconnect() is not reconnected: its commands fail at once
    const connection = new Redis(redisUrl!);
    connection.on('error', () => undefined);
    connections.push(connection);
    return connection;
  }

  function start(connection: Redis = connect()): InstanceLiveness {
    const liveness = startInstanceLiveness(connection, TIMING, logger);
    started.push(liveness);
    return liveness;
  }

  it('keeps its key alive, judges others only after a lifetime of its own, and finds the dead', async () => {
    const one = start();
    const cut = connect();
    const two = start(cut);
    await Promise.all([one.registered(), two.registered()]);
    const ttl = await look.pttl(instanceKey(one.id));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(TIMING.ttlMs);
    const never = randomUUID();
    // too early to judge: an instance not refreshed yet might still come
    expect(await one.gone([never])).toEqual(new Set());
    await sleep(TIMING.ttlMs + 50);
    expect(await one.gone([never, one.id, two.id])).toEqual(new Set([never]));
    // the key outlives many of its lifetimes while refreshed
    await sleep(2 * TIMING.ttlMs);
    expect(await look.exists(instanceKey(two.id))).toBe(1);

    // two's process dies: its connection goes, and nobody refreshes its key any more
    cut.disconnect();
    await sleep(TIMING.ttlMs + 50);
    expect(await look.exists(instanceKey(two.id))).toBe(0);
    expect(await one.gone([two.id])).toEqual(new Set([two.id]));
  });

  it('notices that its own key was gone, sets it again, and does not judge for a lifetime after', async () => {
    const one = start();
    let lost = 0;
    one.onLost(() => lost++);
    await one.registered();
    await sleep(TIMING.ttlMs + 50);
    const never = randomUUID();
    expect(await one.gone([never])).toEqual(new Set([never]));

    await look.del(instanceKey(one.id)); // as after Redis was away longer than the lifetime
    await sleep(TIMING.refreshMs * 2);
    expect(lost).toBe(1);
    expect(await look.exists(instanceKey(one.id))).toBe(1);
    expect(await one.gone([never])).toEqual(new Set());
    await sleep(TIMING.ttlMs + 50);
    expect(await one.gone([never])).toEqual(new Set([never]));
    expect(lost).toBe(1);
  });

  it('deletes its key when it closes', async () => {
    const one = start();
    await one.registered();
    await one.close();
    expect(await look.exists(instanceKey(one.id))).toBe(0);
    await sleep(TIMING.refreshMs * 2);
    expect(await look.exists(instanceKey(one.id))).toBe(0);
  });
});
