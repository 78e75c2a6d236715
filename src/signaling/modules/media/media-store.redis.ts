/**
 * The Redis media store, shared by every instance. A room's keys are `convene:signaling:room:<id>:media:…`:
 * `sessions` (hash: `<participant>:<type>` → `{"audio","video"}` JSON), `presenters` (set of
 * participant ids), `force_mute` (the allow list as a JSON array, present while force-mute is on),
 * `speakers` (hash: participant → `{"is_speaking","updated_at"}` JSON), `janus_room` (the
 * assignment: `<janus room id> <server>`), `feed_ids` (the last feed id handed out) and
 * `publishers` (hash: `<participant>:<type>` → feed id). Every script touches only the keys it is
 * given.
 *
 * Every write that adds something sets the room's keys to live `MEDIA_KEY_TTL_MS` longer: should
 * every instance with participants in the room crash, nobody forgets the room, and its media state
 * expires a week after its last change, as the chat does.
 *
 * What comes back from Redis is checked, and a value that is not what this store writes is taken
 * for absent: a corrupt assignment is replaced by the next `assignJanusRoom`, a corrupt feed id
 * counter continues above the room's publishers' feed ids.
 */
import type { Redis } from 'ioredis';
import {
  assertStorableAssignment,
  assertStorablePublisher,
  MEDIA_SESSION_TYPES,
  type ForceMute,
  type JanusRoomAssignment,
  type MediaPeer,
  type MediaSessionState,
  type MediaSessionType,
  type MediaStore,
  type ParticipantMedia,
  type PublisherEntry,
  type PublisherRecord,
  type SpeakerState,
} from './media-store.js';
import { luaScript, type LuaScript } from '../../../redis/lua-script.js';

/** How long a room's media keys outlive their last change. */
export const MEDIA_KEY_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const ROOM_PREFIX = 'convene:signaling:room:';
const mediaKey = (roomId: string, name: string) => `${ROOM_PREFIX}${roomId}:media:${name}`;

/** The room's keys, in the order every script takes them as KEYS (the scripts name them by their index). */
const keysOf = (roomId: string) => ({
  sessions: mediaKey(roomId, 'sessions'),
  presenters: mediaKey(roomId, 'presenters'),
  forceMute: mediaKey(roomId, 'force_mute'),
  speakers: mediaKey(roomId, 'speakers'),
  assignment: mediaKey(roomId, 'janus_room'),
  feedIds: mediaKey(roomId, 'feed_ids'),
  publishers: mediaKey(roomId, 'publishers'),
});
const KEY_COUNT = 7;
const HASH_INDEX = { sessions: 1, speakers: 4, publishers: 7 } as const;

/** The server of a stored assignment (nil when it is not one this store wrote); the same check as `decodeAssignment`. */
const ASSIGNED_SERVER = `
local function assigned_server(raw)
  if not raw then return nil end
  local id, server = string.match(raw, '^([1-9]%d*) (.+)$')
  if not id or #id > 16 or tonumber(id) > 9007199254740991 then return nil end
  return server
end`;

/**
 * KEYS: the room's keys; ARGV[1]: ttl, ARGV[2]: room id. `extend()` sets the room's keys to live
 * `ttl` longer (PEXPIRE leaves an absent key absent).
 */
const PRELUDE = `
${ASSIGNED_SERVER}
local function extend()
  for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[1]) end
end`;

/** ARGV[3]: which key (a hash), ARGV[4]: field, ARGV[5]: value. */
const SET_FIELD = luaScript(`${PRELUDE}
redis.call('HSET', KEYS[tonumber(ARGV[3])], ARGV[4], ARGV[5])
extend()`);

/** ARGV[3]: the allow list. */
const SET_FORCE_MUTE = luaScript(`${PRELUDE}
redis.call('SET', KEYS[3], ARGV[3])
extend()`);

/** ARGV[3…]: participant ids. Returns those that were not presenters. */
const ADD_PRESENTERS = luaScript(`${PRELUDE}
local added = {}
for i = 3, #ARGV do
  if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then table.insert(added, ARGV[i]) end
end
extend()
return added`);

/** ARGV[3…]: participant ids. Returns those that were presenters. */
const REMOVE_PRESENTERS = luaScript(`
local removed = {}
for i = 3, #ARGV do
  if redis.call('SREM', KEYS[2], ARGV[i]) == 1 then table.insert(removed, ARGV[i]) end
end
return removed`);

/** ARGV[3]: the candidate, encoded. Returns the assignment in force, encoded. */
const ASSIGN = luaScript(`${PRELUDE}
local current = redis.call('GET', KEYS[5])
if assigned_server(current) then return current end
redis.call('SET', KEYS[5], ARGV[3])
extend()
return ARGV[3]`);

/** ARGV[3]: the expected assignment, encoded. Returns 1 when it deleted it. */
const RELEASE = luaScript(`
if redis.call('GET', KEYS[5]) ~= ARGV[3] then return 0 end
redis.call('DEL', KEYS[5])
return 1`);

/**
 * Returns the next feed id. A counter that is not a positive integer (corrupt) continues above the
 * highest feed id the room's publishers hold, so that no feed id in use is handed out again.
 */
const NEXT_FEED_ID = luaScript(`${PRELUDE}
local id = redis.pcall('INCR', KEYS[6])
if type(id) ~= 'number' or id < 1 then
  id = 1
  for _, feed in ipairs(redis.call('HVALS', KEYS[7])) do
    local n = tonumber(feed)
    if n and n >= id then id = math.floor(n) + 1 end
  end
  redis.call('SET', KEYS[6], string.format('%d', id))
end
extend()
return id`);

const field = (participantId: string, type: MediaSessionType) => `${participantId}:${type}`;
const fieldsOf = (participantId: string) => MEDIA_SESSION_TYPES.map((type) => field(participantId, type));

/** A hash field's participant and session type (participant ids may hold colons; types do not). */
function splitField(name: string): { participantId: string; type: MediaSessionType } | undefined {
  const colon = name.lastIndexOf(':');
  const type = name.slice(colon + 1);
  return colon > 0 && (MEDIA_SESSION_TYPES as readonly string[]).includes(type)
    ? { participantId: name.slice(0, colon), type: type as MediaSessionType }
    : undefined;
}

function parseJson(raw: string | null | undefined): unknown {
  if (raw === null || raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function decodeSessionState(raw: string | null | undefined): MediaSessionState | undefined {
  const value = parseJson(raw);
  if (!isRecord(value) || typeof value.audio !== 'boolean' || typeof value.video !== 'boolean') return undefined;
  return { audio: value.audio, video: value.video };
}

function decodeSpeaker(participant: string, raw: string): SpeakerState | undefined {
  const value = parseJson(raw);
  if (!isRecord(value) || typeof value.is_speaking !== 'boolean' || typeof value.updated_at !== 'string' || Number.isNaN(Date.parse(value.updated_at)))
    return undefined;
  return { participant, is_speaking: value.is_speaking, updated_at: value.updated_at };
}

function decodeAllowList(raw: string | null): ForceMute {
  const value = parseJson(raw);
  const isList = (candidate: unknown): candidate is string[] => Array.isArray(candidate) && candidate.every((id) => typeof id === 'string');
  return isList(value) ? { type: 'enabled', allow_list: value } : { type: 'disabled' };
}

const encodeAssignment = (assignment: JanusRoomAssignment) => `${assignment.janusRoomId} ${assignment.server}`;

/** The same check as the scripts' `assigned_server`. */
function decodeAssignment(raw: string | null): JanusRoomAssignment | undefined {
  const match = raw === null ? null : /^([1-9]\d*) (.+)$/s.exec(raw);
  if (!match || match[1]!.length > 16) return undefined;
  const janusRoomId = Number(match[1]);
  return Number.isSafeInteger(janusRoomId) ? { server: match[2]!, janusRoomId } : undefined;
}

function decodeFeedId(raw: string | null | undefined): PublisherRecord | undefined {
  if (raw === null || raw === undefined || !/^[1-9]\d{0,15}$/.test(raw)) return undefined;
  const feedId = Number(raw);
  return Number.isSafeInteger(feedId) ? { feedId } : undefined;
}

/** Answers of a MULTI, failing on the first command that failed. */
function answers(results: [Error | null, unknown][] | null): unknown[] {
  if (!results) throw new Error('a Redis transaction of the media store was aborted');
  return results.map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}

/** The session states of each participant out of HMGET's answer for `fieldsOf` every participant. */
function sessionsFrom(participantIds: readonly string[], values: (string | null)[]): ParticipantMedia[] {
  return participantIds.map((_, i) => {
    const media: ParticipantMedia = {};
    MEDIA_SESSION_TYPES.forEach((type, t) => {
      const state = decodeSessionState(values[i * MEDIA_SESSION_TYPES.length + t]);
      if (state) media[type] = state;
    });
    return media;
  });
}

export function createRedisMediaStore(redis: Redis): MediaStore {
  const ttl = MEDIA_KEY_TTL_MS;
  const run = (script: LuaScript, roomId: string, ...args: (string | number)[]) => {
    return script.run(redis, KEY_COUNT, ...Object.values(keysOf(roomId)), ttl, roomId, ...args);
  };
  const setField = async (roomId: string, hash: keyof typeof HASH_INDEX, name: string, value: string) => {
    await run(SET_FIELD, roomId, HASH_INDEX[hash], name, value);
  };
  const allSessions = (roomId: string, participantIds: readonly string[]) => [keysOf(roomId).sessions, ...participantIds.flatMap(fieldsOf)] as const;

  return {
    async setSessionState(roomId, participantId, type, state) {
      await setField(roomId, 'sessions', field(participantId, type), JSON.stringify({ audio: state.audio, video: state.video }));
    },
    async deleteSessionState(roomId, participantId, type) {
      return (await redis.hdel(keysOf(roomId).sessions, field(participantId, type))) > 0;
    },
    async sessionStates(roomId, participantIds) {
      const states = new Map<string, ParticipantMedia>();
      if (participantIds.length === 0) return states;
      const media = sessionsFrom(participantIds, await redis.hmget(...allSessions(roomId, participantIds)));
      participantIds.forEach((id, i) => {
        if (Object.keys(media[i]!).length > 0) states.set(id, media[i]!);
      });
      return states;
    },
    async peers(roomId, participantIds) {
      if (participantIds.length === 0) return new Map();
      const [values, presenters] = answers(
        await redis
          .multi()
          .hmget(...allSessions(roomId, participantIds))
          .smismember(keysOf(roomId).presenters, ...participantIds)
          .exec(),
      ) as [(string | null)[], number[]];
      const media = sessionsFrom(participantIds, values);
      return new Map(participantIds.map((id, i): [string, MediaPeer] => [id, { ...media[i], is_presenter: presenters[i] === 1 }]));
    },

    async addPresenters(roomId, participantIds) {
      if (participantIds.length === 0) return [];
      return (await run(ADD_PRESENTERS, roomId, ...participantIds)) as string[];
    },
    async removePresenters(roomId, participantIds) {
      if (participantIds.length === 0) return [];
      return (await run(REMOVE_PRESENTERS, roomId, ...participantIds)) as string[];
    },
    async presenters(roomId, participantIds) {
      if (participantIds.length === 0) return new Set();
      const flags = await redis.smismember(keysOf(roomId).presenters, ...participantIds);
      return new Set(participantIds.filter((_, i) => flags[i] === 1));
    },

    async forceMute(roomId) {
      return decodeAllowList(await redis.get(keysOf(roomId).forceMute));
    },
    async setForceMute(roomId, allowList) {
      if (allowList === undefined) await redis.del(keysOf(roomId).forceMute);
      else await run(SET_FORCE_MUTE, roomId, JSON.stringify(allowList));
    },

    async setSpeaking(roomId, state) {
      await setField(roomId, 'speakers', state.participant, JSON.stringify({ is_speaking: state.is_speaking, updated_at: state.updated_at }));
    },
    async speakers(roomId) {
      const stored = await redis.hgetall(keysOf(roomId).speakers);
      return Object.entries(stored).flatMap(([participant, raw]) => decodeSpeaker(participant, raw) ?? []);
    },

    async assignJanusRoom(roomId, candidate) {
      assertStorableAssignment(candidate);
      const assigned = decodeAssignment((await run(ASSIGN, roomId, encodeAssignment(candidate))) as string);
      if (!assigned) throw new Error(`the Janus room assignment of room ${roomId} could not be read`);
      return assigned;
    },
    async janusRoom(roomId) {
      return decodeAssignment(await redis.get(keysOf(roomId).assignment));
    },
    async releaseJanusRoom(roomId, expected) {
      return (await run(RELEASE, roomId, encodeAssignment(expected))) === 1;
    },

    async nextFeedId(roomId) {
      return (await run(NEXT_FEED_ID, roomId)) as number;
    },
    async setPublisher(roomId, participantId, type, record) {
      assertStorablePublisher(record);
      await setField(roomId, 'publishers', field(participantId, type), String(record.feedId));
    },
    async publisher(roomId, participantId, type) {
      return decodeFeedId(await redis.hget(keysOf(roomId).publishers, field(participantId, type)));
    },
    async deletePublisher(roomId, participantId, type) {
      return (await redis.hdel(keysOf(roomId).publishers, field(participantId, type))) > 0;
    },
    async publishers(roomId) {
      const stored = await redis.hgetall(keysOf(roomId).publishers);
      return Object.entries(stored).flatMap(([name, raw]): PublisherEntry[] => {
        const owner = splitField(name);
        const record = decodeFeedId(raw);
        return owner && record ? [{ ...owner, record }] : [];
      });
    },

    async forgetParticipant(roomId, participantId) {
      const keys = keysOf(roomId);
      answers(
        await redis
          .multi()
          .hdel(keys.sessions, ...fieldsOf(participantId))
          .srem(keys.presenters, participantId)
          .hdel(keys.speakers, participantId)
          .hdel(keys.publishers, ...fieldsOf(participantId))
          .exec(),
      );
    },
    async forgetRoom(roomId) {
      await redis.del(...Object.values(keysOf(roomId)));
    },
  };
}
