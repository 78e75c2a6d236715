/**
 * The Redis chat store, shared by every instance. A room's keys are `convene:signaling:room:<id>:chat:…`:
 * `disabled` (present while a moderator has the chat off), `history:global`, `history:group:<name>`
 * and `history:private:<id>:<id>` (lists of message JSON, oldest first, trimmed to
 * `HISTORY_LIMIT`), `correspondents:<participant>` (set of the ids it exchanged private messages
 * with), `last_seen:<participant>` (hash: `global`, `group:<name>`, `private:<id>` → timestamp),
 * and `keys`, the set of all of them, so that `forget` deletes a room's chat in one step without
 * scanning the key space. A room nobody has said anything in has no key.
 *
 * Every write sets its keys' and the index's time to live to `CHAT_KEY_TTL_MS`: should every
 * instance with participants in the room crash, nobody forgets the room, and its chat expires a
 * week after its last change (no meeting runs that long).
 */
import type { Redis } from 'ioredis';
import { HISTORY_LIMIT, noneSeen, pairOf, type ChatStore, type LastSeen, type PostOutcome, type StoredMessage } from './chat-store.js';
import { luaScript } from '../../../redis/lua-script.js';

/** How long a room's chat keys outlive their last change. */
export const CHAT_KEY_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const keysOf = (roomId: string) => {
  const prefix = `convene:signaling:room:${roomId}:chat`;
  return {
    index: `${prefix}:keys`,
    disabled: `${prefix}:disabled`,
    global: `${prefix}:history:global`,
    group: (name: string) => `${prefix}:history:group:${name}`,
    pair: (a: string, b: string) => `${prefix}:history:private:${pairOf(a, b).join(':')}`,
    correspondents: (participantId: string) => `${prefix}:correspondents:${participantId}`,
    lastSeen: (participantId: string) => `${prefix}:last_seen:${participantId}`,
  };
};

/**
 * KEYS: index, disabled, history, and for a private message the correspondents of source and of
 * target; ARGV: message, limit, ttl, source, target. Returns the outcome.
 */
const POST = luaScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 'chat_disabled' end
redis.call('RPUSH', KEYS[3], ARGV[1])
redis.call('LTRIM', KEYS[3], -tonumber(ARGV[2]), -1)
local written = {KEYS[3]}
if #KEYS == 5 then
  redis.call('SADD', KEYS[4], ARGV[5])
  redis.call('SADD', KEYS[5], ARGV[4])
  written = {KEYS[3], KEYS[4], KEYS[5]}
end
for _, key in ipairs(written) do
  redis.call('PEXPIRE', key, ARGV[3])
  redis.call('SADD', KEYS[1], key)
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 'posted'`);

/** KEYS: index. Deletes every key it lists (in batches: Lua's unpack has a limit), then itself. */
const FORGET = luaScript(`
local keys = redis.call('SMEMBERS', KEYS[1])
for i = 1, #keys, 500 do
  redis.call('DEL', unpack(keys, i, math.min(i + 499, #keys)))
end
redis.call('DEL', KEYS[1])`);

const parse = (raw: string) => JSON.parse(raw) as StoredMessage;

/** The hash of `last_seen:<participant>` as the join shows it. */
function lastSeenFrom(fields: Record<string, string>): LastSeen {
  const seen = noneSeen();
  for (const [field, timestamp] of Object.entries(fields)) {
    if (field === 'global') seen.global = timestamp;
    else if (field.startsWith('group:')) seen.groups[field.slice('group:'.length)] = timestamp;
    else if (field.startsWith('private:')) seen.private[field.slice('private:'.length)] = timestamp;
  }
  return seen;
}

/** Answers of a MULTI, failing on the first command that failed. */
function answers(results: [Error | null, unknown][] | null): unknown[] {
  if (!results) throw new Error('a Redis transaction of the chat store was aborted');
  return results.map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}

export function createRedisChatStore(redis: Redis): ChatStore {
  const ttl = CHAT_KEY_TTL_MS;
  return {
    async join(roomId, participantId, groups) {
      const keys = keysOf(roomId);
      const transaction = redis
        .multi()
        .exists(keys.disabled)
        .lrange(keys.global, 0, -1)
        .smembers(keys.correspondents(participantId))
        .hgetall(keys.lastSeen(participantId));
      for (const name of groups) transaction.lrange(keys.group(name), 0, -1);
      const [disabled, room, correspondents, seen, ...groupHistories] = answers(await transaction.exec());
      const partners = correspondents as string[];
      const privateHistories =
        partners.length === 0
          ? []
          : answers(await partners.reduce((pipeline, other) => pipeline.lrange(keys.pair(participantId, other), 0, -1), redis.pipeline()).exec());
      return {
        enabled: disabled === 0,
        room: (room as string[]).map(parse),
        groups: groups.map((name, i) => ({ name, history: (groupHistories[i] as string[]).map(parse) })),
        private: partners.map((correspondent, i) => ({ correspondent, history: (privateHistories[i] as string[]).map(parse) })),
        lastSeen: lastSeenFrom(seen as Record<string, string>),
      };
    },

    async post(roomId, message) {
      const keys = keysOf(roomId);
      const { scope, source, target = '' } = message;
      const history = scope === 'global' ? keys.global : scope === 'group' ? keys.group(target) : keys.pair(source, target);
      const scoped = [keys.index, keys.disabled, history];
      if (scope === 'private') scoped.push(keys.correspondents(source), keys.correspondents(target));
      return (await POST.run(redis, scoped.length, ...scoped, JSON.stringify(message), HISTORY_LIMIT, ttl, source, target)) as PostOutcome;
    },

    async setEnabled(roomId, enabled) {
      const keys = keysOf(roomId);
      if (enabled) {
        await redis.del(keys.disabled);
        return;
      }
      answers(await redis.multi().set(keys.disabled, '1', 'PX', ttl).sadd(keys.index, keys.disabled).pexpire(keys.index, ttl).exec());
    },

    async clearRoomHistory(roomId) {
      await redis.del(keysOf(roomId).global);
    },

    async isCorrespondent(roomId, participantId, other) {
      return (await redis.sismember(keysOf(roomId).correspondents(participantId), other)) === 1;
    },

    async setLastSeen(roomId, participantId, ref, timestamp) {
      const keys = keysOf(roomId);
      const seen = keys.lastSeen(participantId);
      const field = ref.scope === 'global' ? 'global' : `${ref.scope}:${ref.target}`;
      answers(await redis.multi().hset(seen, field, timestamp).pexpire(seen, ttl).sadd(keys.index, seen).pexpire(keys.index, ttl).exec());
    },

    async forget(roomId) {
      await FORGET.run(redis, 1, keysOf(roomId).index);
    },
  };
}
