/**
 * The Redis membership store: `convene:signaling:room:<roomId>:members` (hash: participant id →
 * Member JSON), `…:started_at` (ms), `…:hosts` (hash: participant id → the id of the instance
 * hosting it, see instance-liveness.ts) and `…:host_instances` (set: every instance that hosted a
 * member since the last full look at the hosts). Joining, updating, leaving and the crash cleanup's
 * removal are Lua scripts, so the limit check and the add, the presence check and the replace, and
 * the remove and the count, are each one step for every instance.
 *
 * Reading a room is incremental (issue 21): each joiner lists the whole room, and a room of
 * thousands filling up across instances would otherwise be sent whole from Redis, and decoded, once
 * per joiner. Every change of a member takes the room's next version (`…:versions`: `v`, the
 * `epoch` the counter was started in, and the `floor` below which removals are forgotten); `…:changes`
 * (sorted set) holds each present member at the version of its last change and `…:gone` each
 * removed one at the version of its removal. An instance keeps the records it read with the version
 * it read them at, and later asks only for what changed since; a new epoch (the room emptied and
 * its keys went), a version below the floor, or a count that does not add up (a write by an older
 * Convene that knows no versions) makes it read the room whole.
 *
 * Every write, and every look of a hosting instance's sweep, sets the room's keys to live
 * `ROOM_RECORDS_TTL_MS` longer. While an instance hosts the room it sweeps it every few seconds, so
 * only a room that no live instance hosts runs out: one whose participants all died with their
 * instances and to which nobody came back (whoever comes back first has the dead removed with the
 * full cleanup of an emptied room). The lifetime is longer than the chat's week (CHAT_KEY_TTL_MS),
 * so that a room's chat has expired by itself by the time its ghosts do. The last one out deletes
 * every key but the members hash (then empty, so gone too).
 */
import type { Redis } from 'ioredis';
import { joinOrder } from './member-records.js';
import type { Member, MemberRecord, MembershipStore } from './membership-store.js';
import { luaScript } from '../../redis/lua-script.js';

/** How long a room's member and waiting-room keys outlive their last write or sweep: 8 days. */
export const ROOM_RECORDS_TTL_MS = 8 * 24 * 60 * 60 * 1000;

/** The room's keys, in the order the writing scripts take them as KEYS (the scripts name them by their index). */
const keysOf = (roomId: string) => {
  const prefix = `convene:signaling:room:${roomId}`;
  return {
    members: `${prefix}:members`,
    startedAt: `${prefix}:started_at`,
    hosts: `${prefix}:hosts`,
    hostInstances: `${prefix}:host_instances`,
    changes: `${prefix}:changes`,
    gone: `${prefix}:gone`,
    versions: `${prefix}:versions`,
  };
};
const scriptKeys = (roomId: string) => Object.values(keysOf(roomId));
const KEY_COUNT = scriptKeys('').length;
/** The keys of READ: members, changes, gone, versions. */
const readKeys = (roomId: string) => {
  const { members, changes, gone, versions } = keysOf(roomId);
  return [members, changes, gone, versions];
};

/**
 * Removals remembered at most (past them the oldest half is forgotten and the floor raised): a
 * reader further behind reads the room whole.
 */
const GONE_KEPT = 512;
/** Changes sent to a reader at most; a reader further behind reads the room whole. */
const CHANGES_SENT = 1_000;

/**
 * Shared by the writing scripts. KEYS: members, started_at, hosts, host_instances, changes, gone,
 * versions. `changed(id)` / `removed(id)` give the member the room's next version; `host(id,
 * instance)` records its host; `emptied()` deletes the room's keys; `extend(ttl)` their lifetime.
 */
const HELPERS = `
local function bump()
  local v = redis.call('HINCRBY', KEYS[7], 'v', 1)
  if v == 1 then
    local t = redis.call('TIME')
    redis.call('HSET', KEYS[7], 'epoch', t[1] .. '.' .. t[2], 'floor', 0)
  end
  return v
end
local function changed(id)
  redis.call('ZREM', KEYS[6], id)
  redis.call('ZADD', KEYS[5], bump(), id)
end
local function removed(id)
  redis.call('ZREM', KEYS[5], id)
  redis.call('ZADD', KEYS[6], bump(), id)
  if redis.call('ZCARD', KEYS[6]) > ${GONE_KEPT} then
    local last = redis.call('ZRANGE', KEYS[6], ${GONE_KEPT / 2 - 1}, ${GONE_KEPT / 2 - 1}, 'WITHSCORES')
    redis.call('ZREMRANGEBYRANK', KEYS[6], 0, ${GONE_KEPT / 2 - 1})
    redis.call('HSET', KEYS[7], 'floor', last[2])
  end
end
local function host(id, instance)
  if instance == '' then redis.call('HDEL', KEYS[3], id) return end
  redis.call('HSET', KEYS[3], id, instance)
  redis.call('SADD', KEYS[4], instance)
end
local function emptied()
  redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7])
end
local function extend(ttl)
  for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ttl) end
end
`;

/** ARGV: id, member, limit (-1: none), now, instance ('' none), ttl. Returns the start time, or nil when the room is full. */
const JOIN = luaScript(`${HELPERS}
local limit = tonumber(ARGV[3])
if limit >= 0 and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= limit then
  return false
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
changed(ARGV[1])
host(ARGV[1], ARGV[5])
redis.call('SET', KEYS[2], ARGV[4], 'NX')
extend(ARGV[6])
return redis.call('GET', KEYS[2])`);

/** ARGV: id, member, instance ('' none), ttl. Replaces the member only while it is there. */
const UPDATE = luaScript(`${HELPERS}
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
changed(ARGV[1])
if ARGV[3] ~= '' then host(ARGV[1], ARGV[3]) end
extend(ARGV[4])`);

/** ARGV: id. Returns {removed (0|1), remaining}; the last one out deletes the room's keys. */
const LEAVE = luaScript(`${HELPERS}
local gone = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
local remaining = redis.call('HLEN', KEYS[1])
if remaining == 0 then emptied() elseif gone == 1 then removed(ARGV[1]) end
return {gone, remaining}`);

/**
 * Lua, ending a script: returns HGETALL of the hosts hash KEYS[hosts], and makes the set
 * KEYS[instances] the instances among them (forgetting those that host nobody any more), to live
 * ARGV[1] ms. Also the waiting room's (waiting-room.redis.ts).
 */
export const readHostsLua = (hosts: number, instances: number) => `
local hosts = redis.call('HGETALL', KEYS[${hosts}])
redis.call('DEL', KEYS[${instances}])
for index = 2, #hosts, 2 do redis.call('SADD', KEYS[${instances}], hosts[index]) end
if #hosts > 0 then redis.call('PEXPIRE', KEYS[${instances}], ARGV[1]) end
return hosts`;

/** ARGV: ttl. Returns HGETALL of the hosts (readHostsLua), and extends the room's keys' lifetime. */
const HOSTS = luaScript(`${HELPERS}
extend(ARGV[1])${readHostsLua(3, 4)}`);

/** ARGV: id, instance. Returns {member, remaining} when the instance hosted the member (now removed), else nil. */
const REMOVE_HOSTED = luaScript(`${HELPERS}
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return false end
redis.call('HDEL', KEYS[3], ARGV[1])
local member = redis.call('HGET', KEYS[1], ARGV[1])
if not member then return false end
redis.call('HDEL', KEYS[1], ARGV[1])
local remaining = redis.call('HLEN', KEYS[1])
if remaining == 0 then emptied() else removed(ARGV[1]) end
return {member, remaining}`);

/**
 * KEYS: members, changes, gone, versions; ARGV: the reader's epoch, its version (-1: none).
 * Returns {epoch, version, count, 'all', records} or {epoch, version, count, 'changes', ids, their
 * records, removed ids}.
 */
const READ = luaScript(`
local state = redis.call('HMGET', KEYS[4], 'epoch', 'v', 'floor')
local epoch, version, floor = state[1] or '', tonumber(state[2] or '0'), tonumber(state[3] or '0')
local count = redis.call('HLEN', KEYS[1])
local since = tonumber(ARGV[2])
if epoch == '' or epoch ~= ARGV[1] or since < floor or since > version then
  return {epoch, version, count, 'all', redis.call('HVALS', KEYS[1])}
end
local after = '(' .. ARGV[2]
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], after, '+inf', 'LIMIT', 0, ${CHANGES_SENT + 1})
if #ids > ${CHANGES_SENT} then return {epoch, version, count, 'all', redis.call('HVALS', KEYS[1])} end
local records = {}
if #ids > 0 then records = redis.call('HMGET', KEYS[1], unpack(ids)) end
return {epoch, version, count, 'changes', ids, records, redis.call('ZRANGEBYSCORE', KEYS[3], after, '+inf')}`);

type ReadReply =
  | [epoch: string, version: number, count: number, kind: 'all', records: string[]]
  | [epoch: string, version: number, count: number, kind: 'changes', ids: string[], records: (string | null)[], removed: string[]];

/**
 * `instanceId`: the instance this store's writes come from (instance-liveness.ts), recorded as
 * the host of every member it adds or changes; without it (store tests) no host is recorded.
 */
export function createRedisMembershipStore(redis: Redis, instanceId = ''): MembershipStore {
  const read = readRooms();
  const readRoom = async (roomId: string, since = read.since(roomId)): Promise<MemberRecord[]> => {
    const reply = (await READ.run(redis, 4, ...readKeys(roomId), since.epoch, since.version)) as ReadReply;
    const records = read.apply(roomId, reply);
    // a count that does not add up: written by a Convene without versions; read it whole
    return records ?? readRoom(roomId, { epoch: '', version: -1 });
  };
  const members = oneReadAtATime(readRoom);
  return {
    async join(roomId, member, limit, nowMs) {
      const args = [member.record.id, JSON.stringify(member), limit ?? -1, nowMs, instanceId, ROOM_RECORDS_TTL_MS];
      const startedAt = (await JOIN.run(redis, KEY_COUNT, ...scriptKeys(roomId), ...args)) as string | null;
      return startedAt === null ? { joined: false, reason: 'participant_limit_reached' } : { joined: true, startedAtMs: Number(startedAt) };
    },
    async update(roomId, member) {
      await UPDATE.run(redis, KEY_COUNT, ...scriptKeys(roomId), member.record.id, JSON.stringify(member), instanceId, ROOM_RECORDS_TTL_MS);
    },
    async leave(roomId, participantId) {
      const [removed, remaining] = (await LEAVE.run(redis, KEY_COUNT, ...scriptKeys(roomId), participantId)) as [number, number];
      return { removed: removed === 1, remaining };
    },
    // each caller its own array: they share a read
    members: async (roomId) => (await members(roomId)).slice(),
    async member(roomId, participantId) {
      const member = await redis.hget(keysOf(roomId).members, participantId);
      return member === null ? undefined : (JSON.parse(member) as Member);
    },
    async startedAt(roomId) {
      const startedAt = await redis.get(keysOf(roomId).startedAt);
      return startedAt === null ? undefined : Number(startedAt);
    },
    hosted: {
      async hosts(roomId) {
        return pairs((await HOSTS.run(redis, KEY_COUNT, ...scriptKeys(roomId), ROOM_RECORDS_TTL_MS)) as string[]);
      },
      async instances(roomId) {
        return redis.smembers(keysOf(roomId).hostInstances);
      },
      async removeHostedBy(roomId, participantId, hostId) {
        const removed = (await REMOVE_HOSTED.run(redis, KEY_COUNT, ...scriptKeys(roomId), participantId, hostId)) as [string, number] | null;
        return removed ? { record: JSON.parse(removed[0]) as Member, remaining: removed[1] } : undefined;
      },
    },
  };
}

/**
 * One read of a room in flight at a time: calls made while one is on its way share the next read,
 * sent once that one is answered, so every caller's answer was read after its call (a joiner's
 * list must name everyone who joined before it). While a room fills, dozens of joins on an instance
 * read it at once; each read would otherwise ask for the changes since the same stale version, and
 * Redis would send the same hundreds of records to each of them.
 */
function oneReadAtATime<T>(read: (roomId: string) => Promise<T>): (roomId: string) => Promise<T> {
  const flights = new Map<string, { answer: Promise<T>; next?: Promise<T> }>();
  const launch = (roomId: string): Promise<T> => {
    const flight: { answer: Promise<T>; next?: Promise<T> } = { answer: read(roomId) };
    flights.set(roomId, flight);
    const landed = () => {
      if (flights.get(roomId) === flight && flight.next === undefined) flights.delete(roomId);
    };
    flight.answer.then(landed, landed);
    return flight.answer;
  };
  const settled = () => undefined;
  return (roomId) => {
    const flight = flights.get(roomId);
    if (!flight) return launch(roomId);
    flight.next ??= flight.answer.then(settled, settled).then(() => launch(roomId));
    return flight.next;
  };
}

/** How long the records of a room that nobody joins here any more are kept. */
const READ_IDLE_MS = 60_000;

type Stored = { json: string; record: MemberRecord };

/** A room's members as this instance last read them. */
interface RoomRead {
  epoch: string;
  version: number;
  /** In join order (oldest first), so that the joiner's sort takes one pass. */
  byId: Map<string, Stored>;
  /** The last of `byId`. */
  last: MemberRecord | undefined;
  readAt: number;
}

/**
 * The member records of each room as last read, with the version they were read at. A record whose
 * JSON is unchanged is not parsed again and stays the same (frozen) object, which the caller's own
 * caches rely on (MembershipStore.members).
 */
function readRooms() {
  const rooms = new Map<string, RoomRead>();
  let sweptAt = performance.now();
  /** Housekeeping: forgets the rooms not read for a while (on the real clock; it decides nothing). */
  const sweep = (now: number) => {
    if (now - sweptAt < READ_IDLE_MS) return;
    sweptAt = now;
    for (const [roomId, room] of rooms) if (now - room.readAt >= READ_IDLE_MS) rooms.delete(roomId);
  };
  /** The room after `reply`, or undefined when the changes do not apply to what is kept. */
  const roomAfter = (before: RoomRead | undefined, reply: ReadReply): RoomRead | undefined => {
    const [epoch, version] = reply;
    if (reply[3] === 'all') return wholeRoom(epoch, version, reply[4], before);
    // kept from an earlier epoch, forgotten meanwhile, or overtaken by a newer read: not the base these changes apply to
    if (!before || before.epoch !== epoch || before.version > version) return undefined;
    applyChanges(before, reply[4], reply[5], reply[6]);
    before.version = version;
    return before;
  };
  return {
    since(roomId: string): { epoch: string; version: number } {
      const room = rooms.get(roomId);
      return room ? { epoch: room.epoch, version: room.version } : { epoch: '', version: -1 };
    },
    /** The room's records after `reply`; undefined when it must be read whole (the reply does not add up). */
    apply(roomId: string, reply: ReadReply): MemberRecord[] | undefined {
      const now = performance.now();
      sweep(now);
      let room: RoomRead | undefined;
      try {
        room = roomAfter(rooms.get(roomId), reply);
      } catch (err) {
        rooms.delete(roomId); // half applied
        throw err;
      }
      if (!room || room.byId.size !== reply[2]) {
        rooms.delete(roomId);
        return undefined;
      }
      room.readAt = now;
      rooms.set(roomId, room);
      return Array.from(room.byId.values(), ({ record }) => record);
    },
  };
}

/** The room from every stored record, reusing the records of `before` whose JSON is unchanged. */
function wholeRoom(epoch: string, version: number, stored: string[], before: RoomRead | undefined): RoomRead {
  const known = new Map<string, MemberRecord>();
  if (before) for (const { json, record } of before.byId.values()) known.set(json, record);
  const members = stored.map((json) => ({ json, record: known.get(json) ?? frozenRecord(json) }));
  members.sort((a, b) => joinOrder(a.record, b.record));
  return { epoch, version, byId: new Map(members.map((member) => [member.record.id, member])), last: members.at(-1)?.record, readAt: 0 };
}

/** Replaces or adds the changed records and takes the removed ones out, keeping join order. */
function applyChanges(room: RoomRead, ids: string[], stored: (string | null)[], removed: string[]): void {
  const { byId } = room;
  let inOrder = true;
  for (const id of removed) inOrder = byId.delete(id) && room.last?.id === id ? false : inOrder;
  ids.forEach((id, index) => {
    const json = stored[index];
    const known = byId.get(id);
    if (known?.json === json) return;
    if (json === null || json === undefined) {
      byId.delete(id);
      inOrder = false;
      return;
    }
    const record = frozenRecord(json);
    byId.set(id, { json, record });
    // a changed record keeps its place unless its join time changed; a new one goes last, which is
    // its place unless it arrived before the last one read
    if (known) inOrder &&= known.record.control.joined_at === record.control.joined_at;
    else if (room.last && joinOrder(room.last, record) > 0) inOrder = false;
    else room.last = record;
  });
  if (inOrder) return;
  const sorted = [...byId.values()].sort((a, b) => joinOrder(a.record, b.record));
  room.byId = new Map(sorted.map((member) => [member.record.id, member]));
  room.last = sorted.at(-1)?.record;
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
