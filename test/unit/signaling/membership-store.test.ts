/**
 * The membership store's contract, run against the in-process store and, when REDIS_URL is set,
 * the Redis store through two connections (two service instances sharing one room).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';

import type { Member, MemberRecord, MembershipStore } from '../../../src/signaling/room-state/membership-store.js';
import { createLocalMembershipStore } from '../../../src/signaling/room-state/membership.local.js';
import { createRedisMembershipStore } from '../../../src/signaling/room-state/membership.redis.js';
import { byId, describeRoomStore, guestRecord, T0 } from '../../support/room-stores.js';

/** A guest member (a new id each time), joined at T0. */
const member = (name: string): Member => ({ record: guestRecord(name) });
/** A registered user's member, with its user id. */
const userMember = (name: string): Member => {
  const { record } = member(name);
  return { record: { ...record, control: { ...record.control, role: 'user', participation_kind: 'user' } }, userId: randomUUID() };
};
const recordsOf = (...members: Member[]) => byId(members.map((m) => m.record));

/** The cases, for two stores over the same state (the same store twice in process). */
function membershipContract(stores: () => [MembershipStore, MembershipStore]) {
  it('adds members, keeps their records, and starts the room at the first join', async () => {
    const [store, other] = stores();
    const roomId = randomUUID();
    const [ada, bob] = [member('Ada'), member('Bob')];
    expect(await store.startedAt(roomId)).toBeUndefined();
    expect(await store.join(roomId, ada, undefined, T0)).toEqual({ joined: true, startedAtMs: T0 });
    expect(await other.join(roomId, bob, undefined, T0 + 5_000)).toEqual({ joined: true, startedAtMs: T0 });
    expect(await other.startedAt(roomId)).toBe(T0);
    expect(byId(await store.members(roomId))).toEqual(recordsOf(ada, bob));
  });

  it("keeps a user's id beside its record, and shows it to no one listing the members", async () => {
    const [store, other] = stores();
    const roomId = randomUUID();
    const [ulla, gus] = [userMember('Ulla'), member('Gus')];
    await store.join(roomId, ulla, undefined, T0);
    await store.join(roomId, gus, undefined, T0);
    expect(await other.member(roomId, ulla.record.id)).toEqual(ulla);
    expect(await other.member(roomId, gus.record.id)).toEqual(gus);
    expect(await other.member(roomId, randomUUID())).toBeUndefined();
    expect(byId(await other.members(roomId))).toEqual(recordsOf(ulla, gus));
    await store.leave(roomId, ulla.record.id);
    await store.leave(roomId, gus.record.id);
  });

  it("replaces a member's record while it is in the room, and never brings one back that has left", async () => {
    const [store, other] = stores();
    const roomId = randomUUID();
    const [ulla, gus] = [userMember('Ulla'), member('Gus')];
    await store.join(roomId, ulla, undefined, T0);
    await store.join(roomId, gus, undefined, T0);
    const raised: Member = { ...ulla, record: { ...ulla.record, control: { ...ulla.record.control, hand_is_up: true, role: 'moderator' } } };
    await other.update(roomId, raised);
    expect(await store.member(roomId, ulla.record.id)).toEqual(raised);
    expect(byId(await store.members(roomId))).toEqual(recordsOf(raised, gus));

    await store.leave(roomId, ulla.record.id);
    await other.update(roomId, raised);
    expect(await store.member(roomId, ulla.record.id)).toBeUndefined();
    expect(await store.members(roomId)).toEqual([gus.record]);
    await store.leave(roomId, gus.record.id);
    await other.update(roomId, gus); // in an empty room: nothing comes back
    expect(await store.members(roomId)).toEqual([]);
    expect(await store.startedAt(roomId)).toBeUndefined();
  });

  it('refuses a join when `limit` others are in, and takes it again once one has left', async () => {
    const [store, other] = stores();
    const roomId = randomUUID();
    const [ada, bob, cid] = [member('Ada'), member('Bob'), member('Cid')];
    expect((await store.join(roomId, ada, 2, T0)).joined).toBe(true);
    expect((await other.join(roomId, bob, 2, T0)).joined).toBe(true);
    expect(await store.join(roomId, cid, 2, T0)).toEqual({ joined: false, reason: 'participant_limit_reached' });
    expect(await other.members(roomId)).toHaveLength(2);
    // a member already in the room is no newcomer: its record is replaced
    const renamed: Member = { record: { ...bob.record, control: { ...bob.record.control, display_name: 'Bobby' } } };
    expect((await store.join(roomId, renamed, 2, T0)).joined).toBe(true);
    expect(byId(await store.members(roomId))).toEqual(recordsOf(ada, renamed));
    await other.leave(roomId, ada.record.id);
    expect((await store.join(roomId, cid, 2, T0)).joined).toBe(true);
    expect(byId(await other.members(roomId))).toEqual(recordsOf(renamed, cid));
  });

  it('lets nobody in with a limit of 0', async () => {
    const [store] = stores();
    const roomId = randomUUID();
    expect((await store.join(roomId, member('Ada'), 0, T0)).joined).toBe(false);
    expect(await store.members(roomId)).toEqual([]);
    expect(await store.startedAt(roomId)).toBeUndefined();
  });

  it('counts who is left; the last one out ends the room, and the next join starts it anew', async () => {
    const [store, other] = stores();
    const roomId = randomUUID();
    const [ada, bob] = [member('Ada'), member('Bob')];
    await store.join(roomId, ada, undefined, T0);
    await other.join(roomId, bob, undefined, T0);
    expect(await other.leave(roomId, ada.record.id)).toEqual({ removed: true, remaining: 1 });
    expect(await store.leave(roomId, ada.record.id)).toEqual({ removed: false, remaining: 1 });
    expect(await store.startedAt(roomId)).toBe(T0);
    expect(await store.leave(roomId, bob.record.id)).toEqual({ removed: true, remaining: 0 });
    expect(await other.startedAt(roomId)).toBeUndefined();
    expect(await other.members(roomId)).toEqual([]);
    expect(await other.join(roomId, ada, undefined, T0 + 60_000)).toEqual({ joined: true, startedAtMs: T0 + 60_000 });
    await store.leave(roomId, ada.record.id);
  });

  it('keeps rooms apart', async () => {
    const [store, other] = stores();
    const [first, second] = [randomUUID(), randomUUID()];
    const [ada, bob] = [member('Ada'), member('Bob')];
    await store.join(first, ada, 1, T0);
    expect(await other.join(second, bob, 1, T0 + 1)).toEqual({ joined: true, startedAtMs: T0 + 1 });
    expect(await store.members(first)).toEqual([ada.record]);
    expect(await store.members(second)).toEqual([bob.record]);
    expect(await other.member(second, ada.record.id)).toBeUndefined();
    expect(await other.leave(second, ada.record.id)).toEqual({ removed: false, remaining: 1 });
    await store.leave(first, ada.record.id);
    await other.leave(second, bob.record.id);
  });

  it('hands out frozen records, the same object from read to read while a member is unchanged', async () => {
    const [store, other] = stores();
    const roomId = randomUUID();
    const [ada, bob] = [member('Ada'), member('Bob')];
    await store.join(roomId, ada, undefined, T0);
    await other.join(roomId, bob, undefined, T0);
    const first = await store.members(roomId);
    expect(first.every((record) => Object.isFrozen(record) && Object.isFrozen(record.control))).toBe(true);
    const raised: Member = { record: { ...bob.record, control: { ...bob.record.control, hand_is_up: true } } };
    await other.update(roomId, raised);
    const second = await store.members(roomId);
    expect(byId(second)).toEqual(recordsOf(ada, raised));
    const of = (records: MemberRecord[], id: string) => records.find((record) => record.id === id);
    expect(of(second, ada.record.id)).toBe(of(first, ada.record.id));
    expect(of(second, bob.record.id)).not.toBe(of(first, bob.record.id));
    await store.leave(roomId, ada.record.id);
    await store.leave(roomId, bob.record.id);
  });

  it('lets exactly `limit` of many concurrent joins from both instances in', async () => {
    const pair = stores();
    const roomId = randomUUID();
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => pair[i % 2]!.join(roomId, member(`P${i}`), 3, T0)));
    expect(outcomes.filter((outcome) => outcome.joined)).toHaveLength(3);
    expect(await pair[0].members(roomId)).toHaveLength(3);
    for (const { id } of await pair[0].members(roomId)) await pair[1].leave(roomId, id);
  });
}

/** A guest member who joined `seconds` after T0 (join order is by join time). */
const arrival = (name: string, seconds: number): Member => {
  const { record } = member(name);
  const joinedAt = new Date(T0 + seconds * 1000).toISOString();
  return { record: { ...record, control: { ...record.control, joined_at: joinedAt, hand_updated_at: joinedAt } } };
};

describeRoomStore('membership store', { local: createLocalMembershipStore, redis: createRedisMembershipStore }, membershipContract, (store, look) => {
  const key = (roomId: string, name: string) => `convene:signaling:room:${roomId}:${name}`;
  /** What a reader that has read nothing before sees: the room as stored. */
  const freshRead = (roomId: string) => store().members(roomId);

  it('leaves no key behind once a room is empty', async () => {
    const roomId = randomUUID();
    const [ada, bob] = [member('Ada'), member('Bob')];
    await store().join(roomId, ada, 5, T0);
    await store().join(roomId, bob, 5, T0);
    await store().leave(roomId, bob.record.id); // a removal remembered
    expect(await look().exists(key(roomId, 'members'), key(roomId, 'started_at'), key(roomId, 'gone'))).toBe(3);
    await store().leave(roomId, ada.record.id);
    expect(await look().keys(key(roomId, '*'))).toEqual([]);
  });

  it('reads only what changed since its last read, and sees the room as a fresh reader does, in join order', async () => {
    const [reader, writer] = [store(), store()];
    const roomId = randomUUID();
    const [ada, bob, cyd, dee] = [arrival('Ada', 1), arrival('Bob', 2), arrival('Cyd', 3), arrival('Dee', 4)];
    await writer.join(roomId, ada, undefined, T0);
    await writer.join(roomId, cyd, undefined, T0);
    expect(await reader.members(roomId)).toEqual([ada.record, cyd.record]);

    // an earlier arrival written after a later one, a change, a leave and a new join
    await writer.join(roomId, bob, undefined, T0);
    const raised: Member = { record: { ...cyd.record, control: { ...cyd.record.control, hand_is_up: true } } };
    await writer.update(roomId, raised);
    await writer.join(roomId, dee, undefined, T0);
    await writer.leave(roomId, ada.record.id);
    const second = await reader.members(roomId);
    expect(second).toEqual([bob.record, raised.record, dee.record]);
    expect(second).toEqual(await freshRead(roomId));

    // Ada comes back: a new join time puts her last
    const back = arrival('Ada', 9);
    const adaBack: Member = { record: { ...back.record, id: ada.record.id } };
    await writer.join(roomId, adaBack, undefined, T0);
    await writer.leave(roomId, bob.record.id);
    expect(await reader.members(roomId)).toEqual([raised.record, dee.record, adaBack.record]);
    for (const id of [cyd, dee, ada].map((m) => m.record.id)) await writer.leave(roomId, id);
  });

  it('reads the room whole when it emptied and filled again, or when its changes were forgotten', async () => {
    const [reader, writer] = [store(), store()];
    const roomId = randomUUID();
    const [ada, bob] = [arrival('Ada', 1), arrival('Bob', 2)];
    await writer.join(roomId, ada, undefined, T0);
    expect(await reader.members(roomId)).toEqual([ada.record]);
    await writer.leave(roomId, ada.record.id);
    await writer.join(roomId, bob, undefined, T0); // a new session of the room: its versions start again
    expect(await reader.members(roomId)).toEqual([bob.record]);

    // more removals than are remembered (512) and more changes than are sent (1,000) since the reader's last read
    const crowd = Array.from({ length: 1_100 }, (_, i) => arrival(`P${i}`, 10 + i));
    for (const m of crowd) await writer.join(roomId, m, undefined, T0);
    for (const m of crowd.slice(0, 600)) await writer.leave(roomId, m.record.id);
    expect(await look().hget(key(roomId, 'versions'), 'floor')).not.toBe('0');
    expect(await reader.members(roomId)).toEqual([bob.record, ...crowd.slice(600).map((m) => m.record)]);
    expect(await look().zcard(key(roomId, 'gone'))).toBeLessThanOrEqual(512);
    for (const m of [bob, ...crowd.slice(600)]) await writer.leave(roomId, m.record.id);
    expect(await look().keys(key(roomId, '*'))).toEqual([]);
  });

  it('sends one read of a room at a time; calls made meanwhile share the next, which names everyone who joined before them', async () => {
    // a real connection whose answers to scripts the test can hold back (a slow Redis), and which counts them
    const connection = new Redis(process.env.REDIS_URL!);
    const evalsha = connection.evalsha.bind(connection);
    let [reads, held] = [0, Promise.resolve()];
    connection.evalsha = ((...args: Parameters<typeof evalsha>) => {
      reads++;
      const answer = evalsha(...args);
      return held.then(() => answer);
    }) as typeof connection.evalsha;
    try {
      const [reader, writer] = [createRedisMembershipStore(connection), store()];
      const roomId = randomUUID();
      const [ada, bob] = [arrival('Ada', 1), arrival('Bob', 2)];
      await writer.join(roomId, ada, undefined, T0);
      await connection.ping(); // connected: a command goes out when it is made
      let release = () => {};
      held = new Promise((resolve) => (release = resolve));
      const first = reader.members(roomId); // on its way, answer held back
      await writer.join(roomId, bob, undefined, T0);
      const [second, third] = [reader.members(roomId), reader.members(roomId)];
      release();
      expect(await first).toEqual([ada.record]);
      expect(await second).toEqual([ada.record, bob.record]);
      expect(await third).toEqual([ada.record, bob.record]);
      expect(reads).toBe(2);
      await writer.leave(roomId, ada.record.id);
      await writer.leave(roomId, bob.record.id);
    } finally {
      await connection.quit();
    }
  });

  it('reads the room whole when a member was written without a version (by an older Convene)', async () => {
    const [reader, writer] = [store(), store()];
    const roomId = randomUUID();
    const [ada, bob] = [arrival('Ada', 1), arrival('Bob', 2)];
    await writer.join(roomId, ada, undefined, T0);
    expect(await reader.members(roomId)).toEqual([ada.record]);
    await look().hset(key(roomId, 'members'), bob.record.id, JSON.stringify(bob));
    expect(await reader.members(roomId)).toEqual([ada.record, bob.record]);
    await writer.leave(roomId, ada.record.id);
    await writer.leave(roomId, bob.record.id);
  });
});
