/**
 * Fixtures of the tests of the signaling modules' room stores (membership, waiting room): records
 * as the modules store them, and each store's contract run against the in-process store and, when
 * REDIS_URL is set, against the Redis store through two connections (two instances sharing one
 * room). Kept apart from the integration fixtures, so that these unit tests start no app.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe } from 'vitest';
import type { MemberRecord } from '../../src/signaling/room-state/membership-store.js';

const redisUrl = process.env.REDIS_URL || undefined;

export const T0 = Date.UTC(2026, 4, 4, 9, 30);

/** A guest's record (a new id each time), joined at T0. */
export function guestRecord(name: string): MemberRecord {
  const joinedAt = new Date(T0).toISOString();
  return {
    id: randomUUID(),
    control: {
      display_name: name,
      role: 'guest',
      participation_kind: 'guest',
      hand_is_up: false,
      joined_at: joinedAt,
      left_at: null,
      hand_updated_at: joinedAt,
      is_room_owner: false,
    },
  };
}

/** Records in a fixed order, for comparing lists whose order the store does not promise. */
export const byId = (records: MemberRecord[]) => [...records].sort((a, b) => a.id.localeCompare(b.id));

/**
 * Registers `contract` for the in-process store (one store, seen by both instances) and, when
 * REDIS_URL is set, for two Redis stores on separate connections; `inRedis` adds cases for the
 * Redis store alone: a store, and another connection to look at its keys.
 */
export function describeRoomStore<S>(
  name: string,
  create: { local: () => S; redis: (connection: Redis) => S },
  contract: (stores: () => [S, S]) => void,
  inRedis: (store: () => S, look: () => Redis) => void,
): void {
  describe(`in-process ${name}`, () => {
    contract(() => {
      const store = create.local();
      return [store, store];
    });
  });

  describe.skipIf(!redisUrl)(`Redis ${name}`, () => {
    const connections: Redis[] = [];
    beforeAll(() => {
      connections.push(new Redis(redisUrl!), new Redis(redisUrl!));
    });
    afterAll(async () => {
      await Promise.all(connections.map((connection) => connection.quit()));
    });
    contract(() => [create.redis(connections[0]!), create.redis(connections[1]!)]);
    inRedis(
      () => create.redis(connections[0]!),
      () => connections[1]!,
    );
  });
}
