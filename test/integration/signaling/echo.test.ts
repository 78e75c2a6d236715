/**
 * The `echo` namespace over real sockets: every command comes back with its own payload (its
 * `action` and whatever else it carried), to the sender only, in every state of the join flow.
 */
import { describe, expect, it } from 'vitest';
import { useSignalingRooms } from '../../support/signaling-rooms.js';

const { room, open, join } = useSignalingRooms();

describe('echo', () => {
  it('answers before join with the command payload, unchanged', async () => {
    const { guest } = await room();
    const bob = await open(guest);
    bob.command('echo', 'ping');
    expect((await bob.next('echo')).payload).toEqual({ action: 'ping' });
    const fields = { n: 3, nested: { list: [1, 'two', null], flag: false }, text: 'ünï' };
    bob.command('echo', 'anything_at_all', fields);
    expect((await bob.next('echo')).payload).toEqual({ action: 'anything_at_all', ...fields });
    await bob.expectNothing(undefined, undefined, 50);
  });

  it('answers the sender only, in the room and in the waiting room', async () => {
    const { moderator, guest } = await room({ waitingRoom: true });
    const alice = await join(moderator, 'Alice');
    const bob = await open(guest);
    bob.command('control', 'join', { display_name: 'Bob' });
    await bob.next('moderation', 'in_waiting_room');
    await alice.next('moderation', 'joined_waiting_room');

    alice.command('echo', 'ping', { seq: 1 });
    bob.command('echo', 'ping', { seq: 2 });
    expect((await alice.next('echo')).payload).toEqual({ action: 'ping', seq: 1 });
    expect((await bob.next('echo')).payload).toEqual({ action: 'ping', seq: 2 });
    await Promise.all([alice.expectNothing('echo'), bob.expectNothing('echo')]);
  });

  it('echoes a payload nesting 100 deep, and answers one nesting deeper with invalid_message (not internal_error)', async () => {
    const { guest } = await room();
    const bob = await open(guest);
    const nested = (levels: number): unknown => (levels === 0 ? 'core' : [nested(levels - 1)]);
    bob.command('echo', 'ping', { deep: nested(99) }); // 100 with the payload
    expect((await bob.next('echo')).payload).toEqual({ action: 'ping', deep: nested(99) });
    // 30,000 deep fits in the soft size limit; writing it back once failed with internal_error
    for (const levels of [100, 30_000]) {
      bob.send(`{"namespace":"echo","payload":{"action":"ping","deep":${'['.repeat(levels)}${']'.repeat(levels)}}}`);
      expect((await bob.next('control', 'error')).payload).toEqual({
        message: 'error',
        error: 'invalid_message',
        details: { namespace: 'echo', action: 'ping', problems: ['/payload nests deeper than 100 levels'] },
      });
    }
    bob.command('echo', 'ping');
    expect((await bob.next('echo')).payload).toEqual({ action: 'ping' });
  });
});
