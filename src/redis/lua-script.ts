/**
 * A Lua script run by its SHA1 (EVALSHA) instead of its text (EVAL): Redis neither receives nor
 * hashes the text on every call, and this process does not write it to the socket every time (the
 * membership scripts are over a kilobyte, run several times per join; sending them was a tenth of a
 * join storm's CPU on each instance). A Redis that does not know the script (restarted, flushed)
 * answers NOSCRIPT, and the call is made once more with the text, which loads it.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface LuaScript {
  /** The SHA1 Redis knows the script by. */
  readonly sha: string;
  /** The script's answer; `numKeys` of `args` are its KEYS, the rest its ARGV. */
  run(redis: Redis, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

export function luaScript(source: string): LuaScript {
  const sha = createHash('sha1').update(source).digest('hex');
  return {
    sha,
    async run(redis, numKeys, ...args) {
      try {
        return await redis.evalsha(sha, numKeys, ...args);
      } catch (err) {
        if (!(err instanceof Error && err.message.startsWith('NOSCRIPT'))) throw err;
        return redis.eval(source, numKeys, ...args);
      }
    },
  };
}
