// PLACEHOLDER: replaced by the Redis bus (issue 6, in progress).
import type { Redis } from 'ioredis';
import type { Logger } from '../../logger.js';
import type { SignalingBus } from './signaling-bus.js';

export function createRedisBus(_redis: Redis, _logger: Logger): SignalingBus {
  throw new Error('the Redis bus is not built yet');
}
