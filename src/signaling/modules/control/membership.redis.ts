/**
 * The Redis membership store: `convene:signaling:room:<roomId>:members` (hash: participant id →
 * Member JSON) and `…:started_at` (ms). Joining, updating and leaving are Lua scripts, so the limit
 * check and the add, the presence check and the replace, and the remove and the count, are each one
 * step for every instance.
 */
import type { Redis } from 'ioredis';
import type { Member, MembershipStore } from './membership-store.js';

const membersKey = (roomId: string) => `convene:signaling:room:${roomId}:members`;
const startedAtKey = (roomId: string) => `convene:signaling:room:${roomId}:started_at`;

/** ARGV: id, member, limit (-1: none), now. Returns the start time, or nil when the room is full. */
const JOIN = `
local limit = tonumber(ARGV[3])
if limit >= 0 and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= limit then
  return false
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[4], 'NX')
return redis.call('GET', KEYS[2])`;

/** ARGV: id, member. Replaces the member only while it is there. */
const UPDATE = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end`;

/** ARGV: id. Returns {removed (0|1), remaining}; the last one out deletes the start time. */
const LEAVE = `
local removed = redis.call('HDEL', KEYS[1], ARGV[1])
local remaining = redis.call('HLEN', KEYS[1])
if remaining == 0 then redis.call('DEL', KEYS[2]) end
return {removed, remaining}`;

export function createRedisMembershipStore(redis: Redis): MembershipStore {
  return {
    async join(roomId, member, limit, nowMs) {
      const keys = [membersKey(roomId), startedAtKey(roomId)];
      const startedAt = (await redis.eval(JOIN, 2, ...keys, member.record.id, JSON.stringify(member), limit ?? -1, nowMs)) as string | null;
      return startedAt === null ? { joined: false, reason: 'participant_limit_reached' } : { joined: true, startedAtMs: Number(startedAt) };
    },
    async update(roomId, member) {
      await redis.eval(UPDATE, 1, membersKey(roomId), member.record.id, JSON.stringify(member));
    },
    async leave(roomId, participantId) {
      const [removed, remaining] = (await redis.eval(LEAVE, 2, membersKey(roomId), startedAtKey(roomId), participantId)) as [number, number];
      return { removed: removed === 1, remaining };
    },
    async members(roomId) {
      const members = await redis.hvals(membersKey(roomId));
      return members.map((member) => (JSON.parse(member) as Member).record);
    },
    async member(roomId, participantId) {
      const member = await redis.hget(membersKey(roomId), participantId);
      return member === null ? undefined : (JSON.parse(member) as Member);
    },
    async startedAt(roomId) {
      const startedAt = await redis.get(startedAtKey(roomId));
      return startedAt === null ? undefined : Number(startedAt);
    },
  };
}
