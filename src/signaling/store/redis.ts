/**
 * The Redis signaling store: tickets and resumption records shared by every instance, so a ticket
 * issued by one instance is redeemed on whichever instance the WebSocket reaches. Expiry is Redis's
 * own (`EX`), single use is `GETDEL`, so no two instances can redeem the same ticket.
 */
import type { Redis } from 'ioredis';
import { instanceKey } from '../../redis/instance-liveness.js';
import {
  RESUMPTION_TTL_SECONDS,
  TICKET_TTL_SECONDS,
  sameParticipant,
  type SignalingStore,
  type StoredResumption,
  type TicketData,
} from '../../domain/tickets/signaling-store.js';
import { luaScript } from '../../redis/lua-script.js';

const ticketKey = (ticket: string) => `convene:signaling:ticket:${ticket}`;
const resumptionKey = (token: string) => `convene:signaling:resumption:${token}`;

/** Deletes the key only if it still holds the value read: a take racing another take or a reconnect loses. */
const DELETE_IF_UNCHANGED = luaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`);

export function createRedisSignalingStore(redis: Redis): SignalingStore {
  return {
    async putTicket(ticket, data) {
      const reply = await redis.set(ticketKey(ticket), JSON.stringify(data), 'EX', TICKET_TTL_SECONDS, 'NX');
      return reply === 'OK';
    },
    async takeTicket(ticket) {
      const raw = await redis.getdel(ticketKey(ticket));
      return raw === null ? undefined : (JSON.parse(raw) as TicketData);
    },
    async saveResumption(token, record, instance) {
      const stored: StoredResumption = { ...record, connected: true, ...(instance === undefined ? {} : { instance }) };
      await redis.set(resumptionKey(token), JSON.stringify(stored), 'EX', RESUMPTION_TTL_SECONDS);
    },
    async refreshResumption(token) {
      return (await redis.expire(resumptionKey(token), RESUMPTION_TTL_SECONDS)) === 1;
    },
    async markDisconnected(token) {
      const raw = await redis.get(resumptionKey(token));
      if (raw === null) return;
      const stored: StoredResumption = { ...(JSON.parse(raw) as StoredResumption), connected: false };
      // XX: if the token was taken meanwhile, it stays gone
      await redis.set(resumptionKey(token), JSON.stringify(stored), 'EX', RESUMPTION_TTL_SECONDS, 'XX');
    },
    async takeResumption(token, roomId, expected) {
      const key = resumptionKey(token);
      const raw = await redis.get(key);
      if (raw === null) return { outcome: 'none' };
      const stored = JSON.parse(raw) as StoredResumption;
      if (stored.roomId !== roomId || !sameParticipant(stored.who, expected)) return { outcome: 'none' };
      // a session whose instance died (its liveness key expired) will never be marked disconnected:
      // its participant comes back now, not when the record expires (should the instance live after
      // all, its next refresh finds the record taken and closes the old socket, as for any resume)
      if (stored.connected && !(stored.instance !== undefined && (await redis.exists(instanceKey(stored.instance))) === 0)) {
        return { outcome: 'running' };
      }
      const deleted = await DELETE_IF_UNCHANGED.run(redis, 1, key, raw);
      if (deleted !== 1) return { outcome: 'none' };
      const { connected: _, ...record } = stored;
      return { outcome: 'resumed', record };
    },
    // the connection is shared (rate limiter, bus): its owner closes it
    async close() {},
  };
}
