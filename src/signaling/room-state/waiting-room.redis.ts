/**
 * The Redis waiting-room store: `convene:signaling:room:<roomId>:waiting` (hash: participant id →
 * MemberRecord JSON), `…:waiting_hosts` (hash: participant id → the id of the instance hosting it,
 * see instance-liveness.ts), `…:waiting_host_instances` (set: every instance that hosted one since
 * the last full look at the hosts, as the members' `host_instances`) and `…:accepted` (set of
 * participant ids). Accepting is a Lua script: the remove from `waiting` decides who wins, and only
 * the winner adds to `accepted`; so are removing and the crash cleanup's removal, which forget the
 * host instances with the last one waiting. The keys live `ROOM_RECORDS_TTL_MS` past their last write or sweep, as
 * the members' do (membership.redis.ts says why).
 */
import type { Redis } from 'ioredis';
import type { MemberRecord } from './membership-store.js';
import { pairs, readHostsLua, ROOM_RECORDS_TTL_MS } from './membership.redis.js';
import type { WaitingRoomStore } from './waiting-room-store.js';
import { luaScript } from '../../redis/lua-script.js';

const keysOf = (roomId: string) => {
  const prefix = `convene:signaling:room:${roomId}`;
  return {
    waiting: `${prefix}:waiting`,
    hosts: `${prefix}:waiting_hosts`,
    instances: `${prefix}:waiting_host_instances`,
    accepted: `${prefix}:accepted`,
  };
};
/** The keys in the order the scripts name them: KEYS[1] … KEYS[4]. */
const scriptKeys = (roomId: string) => {
  const { waiting, hosts, instances, accepted } = keysOf(roomId);
  return [waiting, hosts, instances, accepted];
};

/** Shared by the scripts (KEYS: waiting, hosts, instances, accepted): takes a waiting participant out; 1 when it was there. */
const TAKE_OUT = `
local function takeOut(id)
  local removed = redis.call('HDEL', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  if redis.call('HLEN', KEYS[1]) == 0 then redis.call('DEL', KEYS[3]) end
  return removed
end
`;

/** ARGV: id. Returns 1 when it was waiting, else 0. */
const REMOVE = luaScript(`${TAKE_OUT}
return takeOut(ARGV[1])`);

/** ARGV: id, ttl. Returns 1 when it was waiting (and is now accepted), else 0. */
const ACCEPT = luaScript(`${TAKE_OUT}
if takeOut(ARGV[1]) == 0 then return 0 end
redis.call('SADD', KEYS[4], ARGV[1])
redis.call('PEXPIRE', KEYS[4], ARGV[2])
return 1`);

/** ARGV: ttl. Returns HGETALL of the hosts (readHostsLua), and extends the keys' lifetime. */
const HOSTS = luaScript(`
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[1]) end${readHostsLua(2, 3)}`);

/** ARGV: id, instance. Returns {record, remaining} when the instance hosted it (now removed), else nil. */
const REMOVE_HOSTED = luaScript(`${TAKE_OUT}
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return false end
local record = redis.call('HGET', KEYS[1], ARGV[1])
if not record then
  redis.call('HDEL', KEYS[2], ARGV[1])
  return false
end
takeOut(ARGV[1])
return {record, redis.call('HLEN', KEYS[1])}`);

/** `instanceId`: the instance this store's writes come from, recorded as the host of each one it adds; without it (store tests) none. */
export function createRedisWaitingRoomStore(redis: Redis, instanceId = ''): WaitingRoomStore {
  return {
    async add(roomId, participant) {
      const keys = keysOf(roomId);
      const adding = redis.multi().hset(keys.waiting, participant.id, JSON.stringify(participant)).pexpire(keys.waiting, ROOM_RECORDS_TTL_MS);
      if (instanceId) {
        adding.hset(keys.hosts, participant.id, instanceId).pexpire(keys.hosts, ROOM_RECORDS_TTL_MS);
        adding.sadd(keys.instances, instanceId).pexpire(keys.instances, ROOM_RECORDS_TTL_MS);
      }
      failed(await adding.exec());
    },
    async remove(roomId, participantId) {
      return (await REMOVE.run(redis, 4, ...scriptKeys(roomId), participantId)) === 1;
    },
    async accept(roomId, participantId) {
      return (await ACCEPT.run(redis, 4, ...scriptKeys(roomId), participantId, ROOM_RECORDS_TTL_MS)) === 1;
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
        return pairs((await HOSTS.run(redis, 4, ...scriptKeys(roomId), ROOM_RECORDS_TTL_MS)) as string[]);
      },
      async instances(roomId) {
        return redis.smembers(keysOf(roomId).instances);
      },
      async removeHostedBy(roomId, participantId, hostId) {
        const removed = (await REMOVE_HOSTED.run(redis, 4, ...scriptKeys(roomId), participantId, hostId)) as [string, number] | null;
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
