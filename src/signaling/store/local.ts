/** The in-process signaling store: one instance only (without Redis). Expiry follows the injected clock. */
import { systemClock, type Clock } from '../../domain/clock.js';
import { ExpiringLru } from '../../domain/expiring-lru.js';
import {
  RESUMPTION_TTL_SECONDS,
  TICKET_TTL_SECONDS,
  sameParticipant,
  type SignalingStore,
  type StoredResumption,
  type TicketData,
} from '../../domain/tickets/signaling-store.js';

/** Sweep interval for entries nobody touches again (abandoned tickets, tokens never resumed). */
const SWEEP_INTERVAL_MS = 60_000;

export function createLocalSignalingStore(clock: Clock = systemClock): SignalingStore {
  // unbounded: an entry leaves at its expiry or when taken, never to make room
  const tickets = new ExpiringLru<TicketData>(Infinity, clock);
  const resumptions = new ExpiringLru<StoredResumption>(Infinity, clock);
  const expiry = (ttlSeconds: number) => clock() + ttlSeconds * 1000;
  const sweeper = setInterval(() => {
    tickets.sweep();
    resumptions.sweep();
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();

  return {
    async putTicket(ticket, data) {
      if (tickets.get(ticket) !== undefined) return false;
      tickets.set(ticket, structuredClone(data), expiry(TICKET_TTL_SECONDS));
      return true;
    },
    async takeTicket(ticket) {
      const data = tickets.get(ticket);
      tickets.delete(ticket);
      return data;
    },
    async saveResumption(token, record) {
      resumptions.set(token, { ...structuredClone(record), connected: true }, expiry(RESUMPTION_TTL_SECONDS));
    },
    async refreshResumption(token) {
      const stored = resumptions.get(token);
      if (!stored) return false;
      resumptions.set(token, stored, expiry(RESUMPTION_TTL_SECONDS));
      return true;
    },
    async markDisconnected(token) {
      const stored = resumptions.get(token);
      if (stored) resumptions.set(token, { ...stored, connected: false }, expiry(RESUMPTION_TTL_SECONDS));
    },
    async takeResumption(token, roomId, expected) {
      const stored = resumptions.get(token);
      if (!stored || stored.roomId !== roomId || !sameParticipant(stored.who, expected)) return { outcome: 'none' };
      if (stored.connected) return { outcome: 'running' };
      resumptions.delete(token);
      const { connected: _, ...record } = stored;
      return { outcome: 'resumed', record };
    },
    async close() {
      clearInterval(sweeper);
      tickets.clear();
      resumptions.clear();
    },
  };
}
