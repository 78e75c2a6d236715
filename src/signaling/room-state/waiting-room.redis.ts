/**
 * The Redis waiting-room store: `convene:signaling:room:<roomId>:waiting` (hash: participant id →
 * MemberRecord JSON), `…:waiting_hosts` (hash: participant id → the id of the instance hosting it,
 * see instance-liveness.ts) and `…:accepted` (set of participant ids). Accepting is a Lua script:
 * the remove from `waiting` decides who wins, and only the winner adds to `accepted`; so is the
 * crash cleanup's removal. The keys live `ROOM_RECORDS_TTL_MS` past their last write or sweep, as
 * the members' do (membership.redis.ts says why).
 */
import type { Redis } from 'ioredis';
import type { MemberRecord } from './membership-store.js';
import { pairs, ROOM_RECORDS_TTL_MS } from './membership.redis.js';
import type { WaitingRoomStore } from './waiting-room-store.js';

const keysOf = (roomId: string) => {
  const prefix = `convene:signaling:room:${roomId}`;
  return { waiting: `${prefix}:waiting`, hosts: `${prefix}:waiting_hosts`, accepted: `${prefix}:accepted` };
};

/** KEYS: waiting, hosts, accepted; ARGV: id. Returns 1 when it was waiting (and is now accepted), else 0. */
const ACCEPT = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return 1`;

/** KEYS: waiting, hosts, accepted; ARGV: ttl. Returns HGETALL of the hosts, and extends the keys' lifetime. */
const HOSTS = `
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[1]) end
return redis.call('HGETALL', KEYS[2])`;

/** KEYS: waiting, hosts; ARGV: id, instance. Returns {record, remaining} when the instance hosted it (now removed), else nil. */
const REMOVE_HOSTED = `
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return false end
redis.call('HDEL', KEYS[2], ARGV[1])
local record = redis.call('HGET', KEYS[1], ARGV[1])
if not record then return false end
redis.call('HDEL', KEYS[1], ARGV[1])
return {record, redis.call('HLEN', KEYS[1])}`;

/** `instanceId`: the instance this store's writes come from, recorded as the host of each one it adds; without it (store tests) none. */
export function createRedisWaitingRoomStore(redis: Redis, instanceId = ''): WaitingRoomStore {
  return {
    async add(roomId, participant) {
      const keys = keysOf(roomId);
      const adding = redis.multi().hset(keys.waiting, participant.id, JSON.stringify(participant)).pexpire(keys.waiting, ROOM_RECORDS_TTL_MS);
      if (instanceId) adding.hset(keys.hosts, participant.id, instanceId).pexpire(keys.hosts, ROOM_RECORDS_TTL_MS);
      failed(await adding.exec());
    },
    async remove(roomId, participantId) {
      const keys = keysOf(roomId);
      const [[, removed]] = failed(await redis.multi().hdel(keys.waiting, participantId).hdel(keys.hosts, participantId).exec()) as [[null, number]];
      return removed === 1;
    },
    async accept(roomId, participantId) {
      const { waiting, hosts, accepted } = keysOf(roomId);
      return (await redis.eval(ACCEPT, 3, waiting, hosts, accepted, participantId, ROOM_RECORDS_TTL_MS)) === 1;
    },
    async waiting(roomId) {
      const records = await redis.hvals(keysOf(roomId).waiting);
      return records.map((record) => JSON.parse(record) as MemberRecord);
    },
    async isAccepted(roomId, participantId) {
      return (await redis.sismember(keysOf(roomId).accepted, participantId)) === 1;
    },
    async unaccept(roomId, participantId) {
      await redis.srem(keysOf(roomId).accepted, participantId);
    },
    async forgetAccepted(roomId) {
      await redis.del(keysOf(roomId).accepted);
    },
    hosted: {
      async hosts(roomId) {
        const { waiting, hosts, accepted } = keysOf(roomId);
        return pairs((await redis.eval(HOSTS, 3, waiting, hosts, accepted, ROOM_RECORDS_TTL_MS)) as string[]);
      },
      async removeHostedBy(roomId, participantId, hostId) {
        const { waiting, hosts } = keysOf(roomId);
        const removed = (await redis.eval(REMOVE_HOSTED, 2, waiting, hosts, participantId, hostId)) as [string, number] | null;
        return removed ? { record: JSON.parse(removed[0]) as MemberRecord, remaining: removed[1] } : undefined;
      },
    },
  };
}

/** A MULTI's answers, or the first command's error thrown (exec reports them per command). */
function failed(answers: [Error | null, unknown][] | null): [Error | null, unknown][] {
  if (!answers) throw new Error('the Redis transaction was aborted');
  const error = answers.find(([err]) => err)?.[0];
  if (error) throw error;
  return answers;
}
