/**
 * The Redis waiting-room store: `convene:signaling:room:<roomId>:waiting` (hash: participant id →
 * MemberRecord JSON) and `…:accepted` (set of participant ids). Accepting is a Lua script: the
 * remove from `waiting` decides who wins, and only the winner adds to `accepted`.
 */
import type { Redis } from 'ioredis';
import type { MemberRecord } from '../control/membership-store.js';
import type { WaitingRoomStore } from './waiting-room-store.js';

const waitingKey = (roomId: string) => `convene:signaling:room:${roomId}:waiting`;
const acceptedKey = (roomId: string) => `convene:signaling:room:${roomId}:accepted`;

/** ARGV: id. Returns 1 when it was waiting (and is now accepted), else 0. */
const ACCEPT = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('SADD', KEYS[2], ARGV[1])
return 1`;

export function createRedisWaitingRoomStore(redis: Redis): WaitingRoomStore {
  return {
    async add(roomId, participant) {
      await redis.hset(waitingKey(roomId), participant.id, JSON.stringify(participant));
    },
    async remove(roomId, participantId) {
      return (await redis.hdel(waitingKey(roomId), participantId)) === 1;
    },
    async accept(roomId, participantId) {
      return (await redis.eval(ACCEPT, 2, waitingKey(roomId), acceptedKey(roomId), participantId)) === 1;
    },
    async waiting(roomId) {
      const records = await redis.hvals(waitingKey(roomId));
      return records.map((record) => JSON.parse(record) as MemberRecord);
    },
    async isAccepted(roomId, participantId) {
      return (await redis.sismember(acceptedKey(roomId), participantId)) === 1;
    },
    async unaccept(roomId, participantId) {
      await redis.srem(acceptedKey(roomId), participantId);
    },
    async forgetAccepted(roomId) {
      await redis.del(acceptedKey(roomId));
    },
  };
}
