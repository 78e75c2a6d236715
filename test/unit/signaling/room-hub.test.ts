/**
 * The room hubs of one instance at the edges of a hub's life: a session arriving while the room's
 * last session leaves gets a hub that is open (subscribed), not the one being closed; and a hub
 * whose opening fails leaves no subscription behind. A probe module records which hubs the room's
 * messages reach.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RoomMessage } from '../../../src/signaling/bus/signaling-bus.js';
import type { SignalingModule } from '../../../src/signaling/modules/module.js';
import type { RoomHub } from '../../../src/signaling/room-hub.js';
import { createModuleTester, type ModuleTester } from '../../support/module-tester.js';

const PING: RoomMessage = { namespace: 'probe', payload: { message: 'ping' }, audience: { to: 'room' } };

/** Records the hubs each room message reaches and the hubs that close; fails a hub's opening while `failOpening` is set. */
function probe() {
  const reached: RoomHub[] = [];
  const closed: RoomHub[] = [];
  const module: SignalingModule & { failOpening: boolean } = {
    namespace: 'probe',
    failOpening: false,
    async handleCommand() {},
    async onHubEvent(event) {
      if (event.type === 'opened' && module.failOpening) throw new Error('hub opening failed');
      if (event.type === 'message') reached.push(event.hub);
      if (event.type === 'closed') closed.push(event.hub);
    },
  };
  return { module, reached, closed };
}

/** Fails on a closing hub, by throwing or by returning a rejected promise. */
function failingOnClose(namespace: string, how: 'throws' | 'rejects'): SignalingModule {
  return {
    namespace,
    async handleCommand() {},
    onHubEvent(event) {
      if (event.type !== 'closed') return;
      if (how === 'throws') throw new Error(`${namespace} failed on a closing hub`);
      return Promise.reject(new Error(`${namespace} failed on a closing hub`));
    },
  };
}

describe('room hubs', () => {
  let tester: ModuleTester;
  afterEach(() => tester.close());

  function setUp() {
    const { module, reached } = probe();
    tester = createModuleTester({ modules: () => [module] });
    return { module, reached, room: tester.room() };
  }

  /** Publishes on the room's channel and lets the in-process bus deliver. */
  async function publish(roomId: string): Promise<void> {
    await tester.bus.publish(roomId, PING);
    await tester.flush();
  }

  it('gives a session arriving while the last one leaves an open hub', async () => {
    const { reached, room } = setUp();
    const [alice, bob] = [tester.participant({ room }), tester.participant({ room })];
    await tester.connect(alice);
    const adding = tester.connect(bob);
    await tester.hubs.remove(alice); // the hub closes before bob's add has resumed
    const hub = await adding;
    expect(tester.hubs.get(room.roomId)).toBe(hub);
    expect([...hub.sessions.values()]).toEqual([bob]);
    await publish(room.roomId);
    expect(reached).toEqual([hub]);
  });

  it('leaves no subscription behind when a hub fails to open', async () => {
    const { module, reached, room } = setUp();
    module.failOpening = true;
    await expect(tester.connect(tester.participant({ room }))).rejects.toThrow('hub opening failed');
    expect(tester.hubs.get(room.roomId)).toBeUndefined();
    module.failOpening = false;
    const hub = await tester.connect(tester.participant({ room }));
    await publish(room.roomId);
    // only the hub that opened hears the room
    expect(reached).toEqual([hub]);
  });

  it('lets every module hear a hub close although others fail on it, by throwing or rejecting', async () => {
    const { module, closed } = probe();
    tester = createModuleTester({ modules: () => [failingOnClose('thrower', 'throws'), failingOnClose('rejecter', 'rejects'), module] });
    const alice = tester.participant({ room: tester.room() });
    const hub = await tester.connect(alice);
    await tester.hubs.remove(alice);
    await tester.flush();
    expect(closed).toEqual([hub]);
    expect(tester.hubs.get(hub.roomId)).toBeUndefined();
  });
});
