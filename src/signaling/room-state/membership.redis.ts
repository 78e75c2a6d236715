/**
 * The Redis membership store: `convene:signaling:room:<roomId>:members` (hash: participant id →
 * Member JSON), `…:started_at` (ms) and `…:hosts` (hash: participant id → the id of the instance
 * hosting it, see instance-liveness.ts). Joining, updating, leaving and the crash cleanup's removal
 * are Lua scripts, so the limit check and the add, the presence check and the replace, and the
 * remove and the count, are each one step for every instance.
 *
 * Every write, and every look of a hosting instance's sweep, sets the room's keys to live
 * `ROOM_RECORDS_TTL_MS` longer. While an instance hosts the room it sweeps it every few seconds, so
 * only a room that no live instance hosts runs out: one whose participants all died with their
 * instances and to which nobody came back (whoever comes back first has the dead removed with the
 * full cleanup of an emptied room). The lifetime is longer than the chat's week (CHAT_KEY_TTL_MS),
 * so that a room's chat has expired by itself by the time its ghosts do.
 */
import type { Redis } from 'ioredis';
import { joinOrder } from './member-records.js';
import type { Member, MemberRecord, MembershipStore } from './membership-store.js';

/** How long a room's member and waiting-room keys outlive their last write or sweep: 8 days. */
export const ROOM_RECORDS_TTL_MS = 8 * 24 * 60 * 60 * 1000;

const keysOf = (roomId: string) => {
  const prefix = `convene:signaling:room:${roomId}`;
  return [`${prefix}:members`, `${prefix}:started_at`, `${prefix}:hosts`];
};

/** KEYS: members, started_at, hosts. */
const EXTEND = `for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[#ARGV]) end`;

/** ARGV: id, member, limit (-1: none), now, instance ('' none), ttl. Returns the start time, or nil when the room is full. */
const JOIN = `
local limit = tonumber(ARGV[3])
if limit >= 0 and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= limit then
  return false
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[3], ARGV[1], ARGV[5]) else redis.call('HDEL', KEYS[3], ARGV[1]) end
redis.call('SET', KEYS[2], ARGV[4], 'NX')
${EXTEND}
return redis.call('GET', KEYS[2])`;

/** ARGV: id, member, instance ('' none), ttl. Replaces the member only while it is there. */
const UPDATE = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[3], ARGV[1], ARGV[3]) end
${EXTEND}`;

/** ARGV: id. Returns {removed (0|1), remaining}; the last one out deletes the start time. */
const LEAVE = `
local removed = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
local remaining = redis.call('HLEN', KEYS[1])
if remaining == 0 then redis.call('DEL', KEYS[2]) end
return {removed, remaining}`;

/** ARGV: ttl. Returns HGETALL of the hosts, and extends the room's keys' lifetime. */
const HOSTS = `
${EXTEND}
return redis.call('HGETALL', KEYS[3])`;

/** ARGV: id, instance. Returns {member, remaining} when the instance hosted the member (now removed), else nil. */
const REMOVE_HOSTED = `
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return false end
redis.call('HDEL', KEYS[3], ARGV[1])
local member = redis.call('HGET', KEYS[1], ARGV[1])
if not member then return false end
redis.call('HDEL', KEYS[1], ARGV[1])
local remaining = redis.call('HLEN', KEYS[1])
if remaining == 0 then redis.call('DEL', KEYS[2]) end
return {member, remaining}`;

/**
 * `instanceId`: the instance this store's writes come from (instance-liveness.ts), recorded as
 * the host of every member it adds or changes; without it (store tests) no host is recorded.
 */
export function createRedisMembershipStore(redis: Redis, instanceId = ''): MembershipStore {
  const parsed = parsedMembers();
  return {
    async join(roomId, member, limit, nowMs) {
      const args = [member.record.id, JSON.stringify(member), limit ?? -1, nowMs, instanceId, ROOM_RECORDS_TTL_MS];
      const startedAt = (await redis.eval(JOIN, 3, ...keysOf(roomId), ...args)) as string | null;
      return startedAt === null ? { joined: false, reason: 'participant_limit_reached' } : { joined: true, startedAtMs: Number(startedAt) };
    },
    async update(roomId, member) {
      await redis.eval(UPDATE, 3, ...keysOf(roomId), member.record.id, JSON.stringify(member), instanceId, ROOM_RECORDS_TTL_MS);
    },
    async leave(roomId, participantId) {
      const [removed, remaining] = (await redis.eval(LEAVE, 3, ...keysOf(roomId), participantId)) as [number, number];
      return { removed: removed === 1, remaining };
    },
    async members(roomId) {
      return parsed.records(roomId, await redis.hvals(keysOf(roomId)[0]!));
    },
    async member(roomId, participantId) {
      const member = await redis.hget(keysOf(roomId)[0]!, participantId);
      return member === null ? undefined : (JSON.parse(member) as Member);
    },
    async startedAt(roomId) {
      const startedAt = await redis.get(keysOf(roomId)[1]!);
      return startedAt === null ? undefined : Number(startedAt);
    },
    hosted: {
      async hosts(roomId) {
        const keys = keysOf(roomId);
        return pairs((await redis.eval(HOSTS, 3, ...keys, ROOM_RECORDS_TTL_MS)) as string[]);
      },
      async removeHostedBy(roomId, participantId, hostId) {
        const removed = (await redis.eval(REMOVE_HOSTED, 3, ...keysOf(roomId), participantId, hostId)) as [string, number] | null;
        return removed ? { record: JSON.parse(removed[0]) as Member, remaining: removed[1] } : undefined;
      },
    },
  };
}

/** How long the records of a room that nobody joins here any more are kept parsed. */
const PARSED_IDLE_MS = 60_000;

/**
 * The member records of each room as last read, by their stored JSON: each joiner reads the whole
 * room, so in a room of thousands filling up every record would be parsed once per later joiner.
 * A record whose JSON is unchanged is not parsed again and stays the same (frozen) object, which
 * the caller's own caches rely on (MembershipStore.members). The records come out oldest first,
 * those read before in their order and the new ones after them, so that sorting them again (as
 * the joiner's list must be) takes one pass.
 */
function parsedMembers() {
  const rooms = new Map<string, { byJson: Map<string, MemberRecord>; readAt: number }>();
  let sweptAt = performance.now();
  /** Housekeeping: forgets the rooms not read for a while (on the real clock; it decides nothing). */
  const sweep = (now: number) => {
    if (now - sweptAt < PARSED_IDLE_MS) return;
    sweptAt = now;
    for (const [roomId, room] of rooms) if (now - room.readAt >= PARSED_IDLE_MS) rooms.delete(roomId);
  };
  return {
    records(roomId: string, stored: string[]): MemberRecord[] {
      const now = performance.now();
      sweep(now);
      const before = rooms.get(roomId)?.byJson;
      const present = new Set(stored);
      const members: { json: string; record: MemberRecord }[] = [];
      if (before) for (const [json, record] of before) if (present.has(json)) members.push({ json, record });
      const known = members.length;
      for (const json of stored) if (!before?.has(json)) members.push({ json, record: frozenRecord(json) });
      if (members.length > known) members.sort((a, b) => joinOrder(a.record, b.record));
      rooms.set(roomId, { byJson: new Map(members.map(({ json, record }) => [json, record])), readAt: now });
      return members.map(({ record }) => record);
    },
  };
}

/** The record of a stored member's JSON, frozen (it is shared: MembershipStore.members). */
function frozenRecord(json: string): MemberRecord {
  const { record } = JSON.parse(json) as Member;
  Object.freeze(record.control);
  return Object.freeze(record);
}

export function pairs(flat: string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let index = 0; index + 1 < flat.length; index += 2) map.set(flat[index]!, flat[index + 1]!);
  return map;
}
