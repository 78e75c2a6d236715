/**
 * Caps on open signaling sockets (issue 22; `[signaling_caps]`): per registered user, per invite
 * code (all its guests together) and per source address, across every instance with Redis. An
 * opening over a cap is refused with HTTP 429 `too_many_connections` before the upgrade (its ticket
 * is used up). Call-in gateways are exempt, as for tickets (src/domain/tickets/ticket-caps.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { Redis } from 'ioredis';
import proxyaddr from 'proxy-addr';
import type { Config } from '../config/schema.js';
import { trustedProxies, type TrustProxy } from '../config/trust-proxy.js';
import { createLocalOpenCounter, type Acquired, type OpenCounter } from '../domain/caps/open-counter.js';
import { createRedisOpenCounter } from '../domain/caps/redis-open-counter.js';
import { cappedKeys } from '../domain/caps/capped-keys.js';
import type { InstanceLiveness } from '../redis/instance-liveness.js';
import type { ParticipantIdentity } from '../domain/tickets/signaling-store.js';

export interface SocketCaps {
  /** Holds a place for a socket of `who` from `source` until `release`, or names the cap it would exceed. */
  acquire(who: ParticipantIdentity, source: string): Promise<Acquired>;
}

export function createSocketCaps(caps: Config['signaling_caps'], shared?: { redis: Redis; liveness: InstanceLiveness }): SocketCaps {
  const counter: OpenCounter = shared ? createRedisOpenCounter(shared.redis, shared.liveness) : createLocalOpenCounter();
  const limits = { perUser: caps.sockets_per_user, perInviteCode: caps.sockets_per_invite_code, perSource: caps.sockets_per_source };
  return {
    async acquire(who, source) {
      const keys = cappedKeys('sockets', who, source, limits);
      if (keys.length === 0) return { acquired: true, release: async () => {} };
      return counter.acquire(keys);
    },
  };
}

/**
 * The client's address as the HTTP API reads it (Express's `req.ip`, from the same proxy-addr and
 * the same `[http] trust_proxy`): X-Forwarded-For walked from its right end past the trusted
 * proxies, else the socket's peer.
 */
export function sourceAddress(request: IncomingMessage, trustProxy: TrustProxy): string {
  return proxyaddr(request, trustedProxies(trustProxy)) || 'unknown';
}
