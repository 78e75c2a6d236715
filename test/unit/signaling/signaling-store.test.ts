/**
 * The signaling store's contract, run against the in-process store (fake clock) and, when
 * REDIS_URL is set, the Redis store (time moved by shortening the keys' lifetimes).
 */
import { describe, expect, it } from 'vitest';

import { createLocalSignalingStore } from '../../../src/signaling/store/local.js';
import { createRedisSignalingStore } from '../../../src/signaling/store/redis.js';
import type { ParticipantIdentity, SignalingStore, TicketData } from '../../../src/domain/tickets/signaling-store.js';
import { clockedSubjects, runTag } from '../../support/redis-time.js';

const tag = runTag();
let counter = 0;
/** A unique 64-character token carrying the run's tag. */
const token = () => `${tag}${String(++counter).padStart(6, '0')}`.padEnd(64, 'x');

const ROOM = '7a1c2f5e-0000-4000-8000-000000000001';
const OTHER_ROOM = '7a1c2f5e-0000-4000-8000-000000000002';
const ada: ParticipantIdentity = { kind: 'user', userId: 'a0000000-0000-4000-8000-00000000000a' };
const bob: ParticipantIdentity = { kind: 'user', userId: 'b0000000-0000-4000-8000-00000000000b' };
const guest: ParticipantIdentity = { kind: 'guest', inviteCode: 'c0000000-0000-4000-8000-00000000000c' };

const ticketData = (overrides: Partial<TicketData> = {}): TicketData => ({
  participantId: 'p0000000-0000-4000-8000-000000000001',
  roomId: ROOM,
  who: ada,
  breakoutRoom: null,
  resumption: token(),
  resuming: false,
  ...overrides,
});

const subjects = clockedSubjects('signaling store', {
  local: (clock) => createLocalSignalingStore(clock),
  redis: (client) => createRedisSignalingStore(client),
  redisKeys: `convene:signaling:*${tag}*`,
});

describe.each(subjects)('%s signaling store', (_name, make) => {
  const subject = make();
  const [store] = subject.instances as [SignalingStore, ...SignalingStore[]];
  const other = subject.instances.at(-1)!;

  describe('tickets', () => {
    it('hands a ticket out once, with the data it was stored with', async () => {
      const ticket = token();
      const data = ticketData({ who: guest, resuming: true });
      expect(await store.putTicket(ticket, data)).toBe(true);
      expect(await other.takeTicket(ticket)).toEqual(data);
      expect(await store.takeTicket(ticket)).toBeUndefined();
      expect(await other.takeTicket(ticket)).toBeUndefined();
    });

    it('never overwrites an existing ticket', async () => {
      const ticket = token();
      const first = ticketData();
      expect(await store.putTicket(ticket, first)).toBe(true);
      expect(await other.putTicket(ticket, ticketData({ roomId: OTHER_ROOM }))).toBe(false);
      expect(await store.takeTicket(ticket)).toEqual(first);
    });

    it('knows no ticket it never stored', async () => {
      expect(await store.takeTicket(token())).toBeUndefined();
    });

    it('keeps a ticket for 30 s and no longer', async () => {
      const [kept, lost] = [token(), token()];
      await store.putTicket(kept, ticketData());
      await store.putTicket(lost, ticketData());
      await subject.advance(30_000 - subject.edgeMs);
      expect(await store.takeTicket(kept)).toBeDefined();
      await subject.advance(subject.edgeMs);
      expect(await store.takeTicket(lost)).toBeUndefined();
    });

    it('lets exactly one of many concurrent takes redeem a ticket', async () => {
      const ticket = token();
      await store.putTicket(ticket, ticketData());
      const takes = await Promise.all(Array.from({ length: 10 }, (_, i) => subject.instances[i % subject.instances.length]!.takeTicket(ticket)));
      expect(takes.filter((t) => t !== undefined)).toHaveLength(1);
    });
  });

  describe('resumption records', () => {
    const record = (who: ParticipantIdentity = ada) => ({ participantId: 'p0000000-0000-4000-8000-0000000000aa', roomId: ROOM, who });

    it('refuses a token whose session is still connected, and keeps it', async () => {
      const t = token();
      await store.saveResumption(t, record());
      expect(await other.takeResumption(t, ROOM, ada)).toEqual({ outcome: 'running' });
      expect(await store.refreshResumption(t)).toBe(true);
    });

    it('resumes a dropped session once', async () => {
      const t = token();
      await store.saveResumption(t, record());
      await store.markDisconnected(t);
      expect(await other.takeResumption(t, ROOM, ada)).toEqual({ outcome: 'resumed', record: record() });
      expect(await store.takeResumption(t, ROOM, ada)).toEqual({ outcome: 'none' });
    });

    it('ignores a token presented for another room or by another person, and keeps it for its owner', async () => {
      const t = token();
      await store.saveResumption(t, record());
      await store.markDisconnected(t);
      expect(await store.takeResumption(t, OTHER_ROOM, ada)).toEqual({ outcome: 'none' });
      expect(await store.takeResumption(t, ROOM, bob)).toEqual({ outcome: 'none' });
      expect(await store.takeResumption(t, ROOM, guest)).toEqual({ outcome: 'none' });
      expect(await store.takeResumption(t, ROOM, ada)).toMatchObject({ outcome: 'resumed' });
    });

    it('tells guests apart by their invite code', async () => {
      const t = token();
      await store.saveResumption(t, record(guest));
      await store.markDisconnected(t);
      expect(await store.takeResumption(t, ROOM, { kind: 'guest', inviteCode: 'another-code' })).toEqual({ outcome: 'none' });
      expect(await store.takeResumption(t, ROOM, guest)).toEqual({ outcome: 'resumed', record: record(guest) });
    });

    it('knows no token it never saved', async () => {
      expect(await store.takeResumption(token(), ROOM, ada)).toEqual({ outcome: 'none' });
      expect(await store.refreshResumption(token())).toBe(false);
    });

    it('does not bring back a taken token when its old session drops afterwards', async () => {
      const t = token();
      await store.saveResumption(t, record());
      await store.markDisconnected(t);
      await store.takeResumption(t, ROOM, ada);
      expect(await store.refreshResumption(t)).toBe(false); // the old socket learns it was taken over
      await store.markDisconnected(t);
      expect(await store.takeResumption(t, ROOM, ada)).toEqual({ outcome: 'none' });
    });

    it('keeps a dropped session resumable for 120 s and no longer', async () => {
      const [kept, lost] = [token(), token()];
      for (const t of [kept, lost]) {
        await store.saveResumption(t, record());
        await store.markDisconnected(t);
      }
      await subject.advance(120_000 - subject.edgeMs);
      expect(await store.takeResumption(kept, ROOM, ada)).toMatchObject({ outcome: 'resumed' });
      await subject.advance(subject.edgeMs);
      expect(await store.takeResumption(lost, ROOM, ada)).toEqual({ outcome: 'none' });
    });

    it('keeps a live session that refreshes, and forgets one that stops refreshing within 120 s', async () => {
      const [live, silent] = [token(), token()];
      await store.saveResumption(live, record());
      await store.saveResumption(silent, record());
      for (let minute = 0; minute < 5; minute++) {
        await subject.advance(60_000);
        expect(await store.refreshResumption(live)).toBe(true);
      }
      expect(await store.takeResumption(live, ROOM, ada)).toEqual({ outcome: 'running' });
      expect(await store.refreshResumption(silent)).toBe(false);
    });

    it('lets exactly one of many concurrent starts resume a session', async () => {
      const t = token();
      await store.saveResumption(t, record());
      await store.markDisconnected(t);
      const takes = await Promise.all(Array.from({ length: 10 }, (_, i) => subject.instances[i % subject.instances.length]!.takeResumption(t, ROOM, ada)));
      expect(takes.filter((take) => take.outcome === 'resumed')).toHaveLength(1);
    });
  });
});
