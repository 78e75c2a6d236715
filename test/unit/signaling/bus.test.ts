/**
 * The signaling bus's contract, run against the in-process bus and, when REDIS_URL is set, the
 * Redis bus: two buses on two connections there, as two instances of the service would have.
 * Absence is checked without sleeping: a marker published after the message that must not arrive
 * comes in after it would have (one publisher, one subscriber connection: Redis keeps the order).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createLocalBus } from '../../../src/signaling/bus/local.js';
import { createRedisBus, roomChannel } from '../../../src/signaling/bus/redis.js';
import type { RoomMessage, SignalingBus } from '../../../src/signaling/bus/signaling-bus.js';

const redisUrl = process.env.REDIS_URL || undefined;

interface Subject {
  /** Buses over one room channel: two on Redis (two instances), the in-process one once. */
  instances: SignalingBus[];
  /** Redis only: publishes raw text on the room's channel, as a broken publisher would. */
  publishRaw?(roomId: string, text: string): Promise<void>;
  /** Redis only: how many connections subscribe to the room's channel. */
  subscribers?(roomId: string): Promise<number>;
  /** Redis only: the connection the first bus publishes through (the caller's, not the bus's). */
  shared?: Redis;
  /** Redis only: a connection of the test's own. */
  raw?: Redis;
}

const connections: Redis[] = [];
afterAll(async () => {
  await Promise.all(connections.map((c) => c.quit()));
});
const connect = (connectionName?: string) => {
  const connection = new Redis(redisUrl!, { connectionName });
  connections.push(connection);
  return connection;
};

/** Errors the buses log, to check that malformed messages and failing listeners are reported. */
const logged: string[] = [];
const logger = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line).msg) });

const subjects: [string, () => Subject][] = [['local', () => ({ instances: [createLocalBus(logger)] })]];
if (redisUrl) {
  subjects.push([
    'redis',
    () => {
      const [a, b, raw] = [connect(), connect(), connect()];
      return {
        instances: [createRedisBus(a, logger), createRedisBus(b, logger)],
        shared: a,
        raw,
        publishRaw: async (roomId, text) => void (await raw.publish(roomChannel(roomId), text)),
        subscribers: async (roomId) => Number(((await raw.pubsub('NUMSUB', roomChannel(roomId))) as [string, number])[1]),
      };
    },
  ]);
} else {
  console.log('REDIS_URL is not set: the Redis signaling bus is not tested in this run');
}

const message = (n: number, audience: RoomMessage['audience'] = { to: 'room' }): RoomMessage => ({
  namespace: 'echo',
  payload: { message: 'n', n },
  audience,
});
const MARKER = message(-1);

/** A listener that records what it gets, and waits for it. */
function recorder() {
  const got: RoomMessage[] = [];
  const listener = (m: RoomMessage) => void got.push(m);
  async function until(count: number, ms = 2_000): Promise<RoomMessage[]> {
    const deadline = Date.now() + ms;
    while (got.length < count) {
      if (Date.now() > deadline) throw new Error(`got ${got.length} of ${count} messages: ${JSON.stringify(got)}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return got;
  }
  /** The numbers received before the marker (which must arrive). */
  async function beforeMarker(): Promise<number[]> {
    const deadline = Date.now() + 2_000;
    while (!got.some((m) => m.payload.n === -1)) {
      if (Date.now() > deadline) throw new Error(`the marker never arrived: ${JSON.stringify(got)}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return got
      .slice(
        0,
        got.findIndex((m) => m.payload.n === -1),
      )
      .map((m) => m.payload.n as number);
  }
  return { got, listener, until, beforeMarker };
}

describe.each(subjects)('%s signaling bus', (name, make) => {
  const subject = make();
  const [bus, other] = [subject.instances[0]!, subject.instances.at(-1)!];
  afterAll(() => Promise.all(subject.instances.map((b) => b.close())));
  const endings: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await Promise.all(endings.splice(0).map((end) => end()));
  });
  /** Subscribes and ends the subscription after the test. */
  async function listen(on: SignalingBus, roomId: string, listener: (m: RoomMessage) => void) {
    const end = await on.subscribe(roomId, listener);
    endings.push(end);
    return end;
  }

  it('delivers a message to every listener of its room, on every instance, the publisher included', async () => {
    const room = randomUUID();
    const [a, b, c] = [recorder(), recorder(), recorder()];
    await listen(bus, room, a.listener);
    await listen(bus, room, b.listener);
    await listen(other, room, c.listener);
    await other.publish(room, message(1, { to: 'participant', id: 'p1' }));
    for (const r of [a, b, c]) expect(await r.until(1)).toEqual([message(1, { to: 'participant', id: 'p1' })]);
  });

  it('keeps rooms apart', async () => {
    const [room, elsewhere] = [randomUUID(), randomUUID()];
    const [here, there] = [recorder(), recorder()];
    await listen(other, room, here.listener);
    await listen(other, elsewhere, there.listener);
    await bus.publish(room, message(1));
    await bus.publish(elsewhere, MARKER);
    expect(await there.beforeMarker()).toEqual([]);
    expect(await here.until(1)).toEqual([message(1)]);
  });

  it("keeps each publisher's order", async () => {
    const room = randomUUID();
    const r = recorder();
    await listen(other, room, r.listener);
    // sent without waiting for each other, as a module publishing in a burst does
    await Promise.all([...Array(200).keys()].map((n) => bus.publish(room, message(n))));
    expect((await r.until(200)).map((m) => m.payload.n)).toEqual([...Array(200).keys()]);
  });

  it('never misses a message published once subscribe has resolved', async () => {
    for (let i = 0; i < 30; i++) {
      const room = randomUUID();
      const [first, second] = [recorder(), recorder()];
      // two listeners subscribing at once: the second shares the first's SUBSCRIBE, and waits for it too
      await Promise.all([listen(other, room, first.listener), listen(other, room, second.listener)]);
      await bus.publish(room, message(i));
      expect(await first.until(1)).toEqual([message(i)]);
      expect(await second.until(1)).toEqual([message(i)]);
    }
  });

  it('stops delivering to a listener that unsubscribed, and only to it', async () => {
    const room = randomUUID();
    const [leaving, staying] = [recorder(), recorder()];
    const end = await listen(other, room, leaving.listener);
    await listen(other, room, staying.listener);
    await end();
    await end(); // a second call changes nothing
    await bus.publish(room, message(1));
    await bus.publish(room, MARKER);
    expect(await staying.beforeMarker()).toEqual([1]);
    expect(leaving.got).toEqual([]);
  });

  it('gives a listener that subscribed the same function twice two deliveries', async () => {
    const room = randomUUID();
    const r = recorder();
    await listen(bus, room, r.listener);
    await listen(bus, room, r.listener);
    await bus.publish(room, message(1));
    expect(await r.until(2)).toEqual([message(1), message(1)]);
  });

  it('serves a room left and joined again at once, with nothing of before', async () => {
    const room = randomUUID();
    const [before, after, marker] = [recorder(), recorder(), recorder()];
    const markerRoom = randomUUID();
    await listen(other, markerRoom, marker.listener);
    const end = await other.subscribe(room, before.listener);
    await bus.publish(room, message(1));
    const ending = end(); // not awaited: the next subscribe overlaps the UNSUBSCRIBE
    await listen(other, room, after.listener);
    await ending;
    await bus.publish(room, message(2));
    await bus.publish(markerRoom, MARKER);
    await marker.beforeMarker();
    expect(after.got.map((m) => m.payload.n)).toEqual([2]);
    // 1 may or may not reach the leaving listener (it left while 1 was under way); 2 never does
    expect(before.got.map((m) => m.payload.n)).not.toContain(2);
  });

  it('keeps other listeners served when one throws, and reports it', async () => {
    const room = randomUUID();
    const r = recorder();
    await listen(other, room, () => {
      throw new Error('listener failure');
    });
    await listen(other, room, r.listener);
    await bus.publish(room, message(1));
    await bus.publish(room, message(2));
    expect((await r.until(2)).map((m) => m.payload.n)).toEqual([1, 2]);
    expect(logged).toContain('a signaling bus listener failed');
  });

  describe.skipIf(!subject.subscribers)('on Redis', () => {
    it('subscribes once per room and instance, and unsubscribes when the last listener leaves', async () => {
      const room = randomUUID();
      const ends = await Promise.all([1, 2, 3].map(() => bus.subscribe(room, () => {})));
      const elsewhere = await other.subscribe(room, () => {});
      expect(await subject.subscribers!(room)).toBe(2);
      await ends[0]!();
      await ends[1]!();
      expect(await subject.subscribers!(room)).toBe(2);
      await ends[2]!();
      expect(await subject.subscribers!(room)).toBe(1);
      await elsewhere();
      expect(await subject.subscribers!(room)).toBe(0);
    });

    it('drops and reports a malformed message, and delivers the next', async () => {
      const room = randomUUID();
      const r = recorder();
      await listen(other, room, r.listener);
      await subject.publishRaw!(room, 'not json {');
      await subject.publishRaw!(room, JSON.stringify({ namespace: 'echo', payload: { n: 0 }, audience: { to: 'room' } }));
      await subject.publishRaw!(room, JSON.stringify({ namespace: 'echo', payload: { message: 'n' }, audience: { to: 'everyone' } }));
      await bus.publish(room, message(1));
      expect(await r.until(1)).toEqual([message(1)]);
      expect(logged.filter((msg) => msg === 'dropped a malformed signaling bus message')).toHaveLength(3);
    });

    it('subscribes again by itself when its subscriber connection drops, and says what was lost', async () => {
      const room = randomUUID();
      const connectionName = `bus-test-${randomUUID()}`;
      const own = createRedisBus(connect(connectionName), logger);
      try {
        const r = recorder();
        await own.subscribe(room, r.listener);
        // the subscriber is a duplicate of the given connection, so it carries the same name
        const clients = (await subject.raw!.client('LIST')) as string;
        const subscriberIds = clients
          .split('\n')
          .filter((line) => line.includes(` name=${connectionName} `) && / sub=1 /.test(line))
          .map((line) => /^id=(\d+)/.exec(line)![1]!);
        expect(subscriberIds).toHaveLength(1);
        await subject.raw!.client('KILL', 'ID', subscriberIds[0]!);
        // messages of the gap are lost; publish until one gets through the new connection
        const deadline = Date.now() + 5_000;
        for (let n = 0; r.got.length === 0; n++) {
          if (Date.now() > deadline) throw new Error('the bus never subscribed again');
          await bus.publish(room, message(n));
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(logged).toContain('redis subscriber reconnected: room events published while it was away are lost for this instance');
      } finally {
        await own.close();
      }
    });
  });

  // last: closes the subject's buses
  it('close ends every subscription of the bus, and only those', async () => {
    const room = randomUUID();
    const [closing, staying] = [recorder(), recorder()];
    await bus.subscribe(room, closing.listener);
    if (other !== bus) await listen(other, room, staying.listener);
    await bus.close();
    if (subject.subscribers) {
      expect(await subject.subscribers(room)).toBe(1);
      await expect(bus.subscribe(room, () => {})).rejects.toThrow('closed');
    }
    if (other !== bus) {
      await other.publish(room, message(1));
      await other.publish(room, MARKER);
      expect(await staying.beforeMarker()).toEqual([1]);
      // the bus's shared connection is the caller's and stays open
      expect(await subject.shared!.ping()).toBe('PONG');
    } else {
      await bus.publish(room, message(1));
      await new Promise((resolve) => setImmediate(resolve)); // after the in-process bus's delivery
    }
    expect(closing.got).toEqual([]);
  });
});
