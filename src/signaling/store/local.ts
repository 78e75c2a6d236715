/** The in-process signaling store: one instance only (without Redis). Expiry follows the injected clock. */
import { systemClock, type Clock } from '../../domain/clock.js';
import {
  RESUMPTION_TTL_SECONDS,
  TICKET_TTL_SECONDS,
  sameParticipant,
  type ResumptionRecord,
  type SignalingStore,
  type TicketData,
} from './signaling-store.js';

interface Expiring<V> {
  value: V;
  expiresAtMs: number;
}

/** A map whose entries vanish at their expiry; expired entries are dropped when touched or swept. */
class ExpiringMap<V> {
  private readonly entries = new Map<string, Expiring<V>>();
  constructor(private readonly clock: Clock) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAtMs <= this.clock()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry?.value;
  }
  set(key: string, value: V, ttlSeconds: number): void {
    this.entries.set(key, { value, expiresAtMs: this.clock() + ttlSeconds * 1000 });
  }
  delete(key: string): void {
    this.entries.delete(key);
  }
  sweep(): void {
    const now = this.clock();
    for (const [key, entry] of this.entries) if (entry.expiresAtMs <= now) this.entries.delete(key);
  }
  clear(): void {
    this.entries.clear();
  }
}

interface StoredResumption extends ResumptionRecord {
  connected: boolean;
}

/** Sweep interval for entries nobody touches again (abandoned tickets, tokens never resumed). */
const SWEEP_INTERVAL_MS = 60_000;

export function createLocalSignalingStore(clock: Clock = systemClock): SignalingStore {
  const tickets = new ExpiringMap<TicketData>(clock);
  const resumptions = new ExpiringMap<StoredResumption>(clock);
  const sweeper = setInterval(() => {
    tickets.sweep();
    resumptions.sweep();
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();

  return {
    async putTicket(ticket, data) {
      if (tickets.get(ticket) !== undefined) return false;
      tickets.set(ticket, structuredClone(data), TICKET_TTL_SECONDS);
      return true;
    },
    async takeTicket(ticket) {
      const data = tickets.get(ticket);
      tickets.delete(ticket);
      return data;
    },
    async saveResumption(token, record) {
      resumptions.set(token, { ...structuredClone(record), connected: true }, RESUMPTION_TTL_SECONDS);
    },
    async refreshResumption(token) {
      const stored = resumptions.get(token);
      if (!stored) return false;
      resumptions.set(token, stored, RESUMPTION_TTL_SECONDS);
      return true;
    },
    async markDisconnected(token) {
      const stored = resumptions.get(token);
      if (stored) resumptions.set(token, { ...stored, connected: false }, RESUMPTION_TTL_SECONDS);
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
