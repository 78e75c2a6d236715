/**
 * The stores of the rooms' state that the modules keep (membership, waiting room, room settings,
 * chat, timer, media), chosen here once for all of them: in Redis when instances share state, otherwise in
 * this process. Modules receive the stores, never Redis; a test may give two instances one store.
 */
import type { Redis } from 'ioredis';
import type { InstanceLiveness } from '../redis/instance-liveness.js';
import type { ChatStore } from './modules/chat/chat-store.js';
import { createLocalChatStore } from './modules/chat/chat-store.local.js';
import { createRedisChatStore } from './modules/chat/chat-store.redis.js';
import type { MediaStore } from './modules/media/media-store.js';
import { createLocalMediaStore } from './modules/media/media-store.local.js';
import { createRedisMediaStore } from './modules/media/media-store.redis.js';
import type { TimerStore } from './modules/timer/timer-store.js';
import { createLocalTimerStore } from './modules/timer/timer-store.local.js';
import { createRedisTimerStore } from './modules/timer/timer-store.redis.js';
import type { MembershipStore } from './room-state/membership-store.js';
import { createLocalMembershipStore } from './room-state/membership.local.js';
import { createRedisMembershipStore } from './room-state/membership.redis.js';
import type { RoomSettingsStore } from './room-state/room-settings-store.js';
import { createLocalRoomSettingsStore } from './room-state/room-settings.local.js';
import { createRedisRoomSettingsStore } from './room-state/room-settings.redis.js';
import type { WaitingRoomStore } from './room-state/waiting-room-store.js';
import { createLocalWaitingRoomStore } from './room-state/waiting-room.local.js';
import { createRedisWaitingRoomStore } from './room-state/waiting-room.redis.js';

export interface RoomStores {
  membership: MembershipStore;
  waitingRoom: WaitingRoomStore;
  settings: RoomSettingsStore;
  chat: ChatStore;
  timer: TimerStore;
  media: MediaStore;
}

/** `liveness`: with `redis`, this instance, named as the host of the records it adds (crash cleanup). */
export function createRoomStores(redis?: Redis, liveness?: InstanceLiveness): RoomStores {
  if (!redis) {
    return {
      membership: createLocalMembershipStore(),
      waitingRoom: createLocalWaitingRoomStore(),
      settings: createLocalRoomSettingsStore(),
      chat: createLocalChatStore(),
      timer: createLocalTimerStore(),
      media: createLocalMediaStore(),
    };
  }
  return {
    membership: createRedisMembershipStore(redis, liveness?.id),
    waitingRoom: createRedisWaitingRoomStore(redis, liveness?.id),
    settings: createRedisRoomSettingsStore(redis),
    chat: createRedisChatStore(redis),
    timer: createRedisTimerStore(redis),
    media: createRedisMediaStore(redis),
  };
}
