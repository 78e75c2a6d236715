/**
 * The joiner's memory of the arrivals its list named (src/signaling/modules/listed-recently.ts):
 * an arrival event its list already told it of is withheld once; an arrival its hub delivered
 * before the joiner was held is not remembered (the joiner was no recipient then, so that event
 * cannot reach it); an arrival delivered while it was held, one still on its way, and a rejoin on
 * its way after an earlier arrival the hub saw, are. Without a hold count, every recent arrival is.
 */
import { describe, expect, it } from 'vitest';
import { listedRecently } from '../../../src/signaling/modules/listed-recently.js';
import type { MemberRecord } from '../../../src/signaling/room-state/membership-store.js';
import type { EventPayload, Session } from '../../../src/signaling/session.js';

const NOW = Date.parse('2027-01-01T10:00:00Z');
const at = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000).toISOString();
const record = (id: string, joinedAt: string) => ({ id, control: { joined_at: joinedAt } }) as unknown as MemberRecord;
const joined = (id: string, joinedAt: string): EventPayload => ({ message: 'joined', id, control: { joined_at: joinedAt } });
const left = (id: string): EventPayload => ({ message: 'left', id });
const newSession = () => ({}) as Session;

function setUp() {
  const listed = listedRecently(() => NOW, { arrival: 'joined', departure: 'left' });
  const hub = {};
  return { listed, hub };
}

describe('listedRecently', () => {
  it('withholds, once, the arrival of a listed participant delivered while the joiner was held or still on its way', () => {
    const { listed, hub } = setUp();
    const bob = newSession();
    const heldAt = { hub, delivered: listed.deliveredSoFar(hub) };
    listed.delivered(hub, joined('ada', at(1))); // reaches the hub while Bob is held
    listed.remember(bob, [record('ada', at(1)), record('cy', at(1))], heldAt); // cy's joined is still on its way
    expect(listed.withholds(bob, joined('ada', at(1)))).toBe(true);
    expect(listed.withholds(bob, joined('ada', at(1)))).toBe(false);
    listed.delivered(hub, joined('cy', at(1)));
    expect(listed.withholds(bob, joined('cy', at(1)))).toBe(true);
  });

  it('does not remember an arrival its hub delivered before the joiner was held', () => {
    const { listed, hub } = setUp();
    listed.delivered(hub, joined('ada', at(1)));
    const bob = newSession();
    listed.remember(bob, [record('ada', at(1))], { hub, delivered: listed.deliveredSoFar(hub) });
    // a joined of ada could only be a new one; it is sent
    expect(listed.withholds(bob, joined('ada', at(1)))).toBe(false);
  });

  it('remembers a rejoin on its way although the hub saw an earlier arrival of the same participant, and forgets on departure', () => {
    const { listed, hub } = setUp();
    listed.delivered(hub, joined('ada', at(3)));
    const bob = newSession();
    listed.remember(bob, [record('ada', at(1))], { hub, delivered: listed.deliveredSoFar(hub) });
    expect(listed.withholds(bob, joined('ada', at(1)))).toBe(true);

    // after a departure the hub no longer counts her earlier arrival: a later list remembers her
    listed.delivered(hub, left('ada'));
    const carl = newSession();
    listed.remember(carl, [record('ada', at(3))], { hub, delivered: listed.deliveredSoFar(hub) });
    expect(listed.withholds(carl, joined('ada', at(3)))).toBe(true);
  });

  it('keeps each hub apart, remembers every recent arrival without a hold count, and none older than the window', () => {
    const { listed, hub } = setUp();
    listed.delivered({}, joined('ada', at(1))); // another hub's
    const bob = newSession();
    listed.remember(bob, [record('ada', at(1))], { hub, delivered: listed.deliveredSoFar(hub) });
    expect(listed.withholds(bob, joined('ada', at(1)))).toBe(true);

    listed.delivered(hub, joined('eve', at(1)));
    const dan = newSession();
    listed.remember(dan, [record('eve', at(1)), record('old', at(6))]);
    expect(listed.withholds(dan, joined('eve', at(1)))).toBe(true);
    expect(listed.withholds(dan, joined('old', at(6)))).toBe(false);
  });
});
