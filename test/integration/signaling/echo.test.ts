/**
 * The `echo` namespace over real sockets: every command comes back with its own payload (its
 * `action` and whatever else it carried), to the sender only, in every state of the join flow.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connect, joinRoom, startTicket, type SignalingClient, type Starter } from '../../support/signaling-client.js';
import { dbOf, insertInvite, insertRoom, useSignalingApp } from '../../support/signaling.js';

const app = useSignalingApp();

const clients: SignalingClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});
const kept = <C extends SignalingClient>(client: C): C => {
  clients.push(client);
  return client;
};

let logins = 0;
async function room(options: { waitingRoom?: boolean } = {}) {
  const owner = await app.login(`owner${++logins}`);
  const roomId = await insertRoom(app, owner);
  if (options.waitingRoom) await dbOf(app).updateTable('rooms').set({ waiting_room: true }).where('id', '=', roomId).execute();
  const moderator: Starter = { roomId, token: owner.accessToken };
  const guest: Starter = { roomId, inviteCode: await insertInvite(app, roomId, owner) };
  return { moderator, guest };
}

describe('echo', () => {
  it('answers before join with the command payload, unchanged', async () => {
    const { guest } = await room();
    const bob = kept(await connect(app, (await startTicket(app, guest)).ticket));
    bob.command('echo', 'ping');
    expect((await bob.next('echo')).payload).toEqual({ action: 'ping' });
    const fields = { n: 3, nested: { list: [1, 'two', null], flag: false }, text: 'ünï' };
    bob.command('echo', 'anything_at_all', fields);
    expect((await bob.next('echo')).payload).toEqual({ action: 'anything_at_all', ...fields });
    await bob.expectNothing(undefined, undefined, 50);
  });

  it('answers the sender only, in the room and in the waiting room', async () => {
    const { moderator, guest } = await room({ waitingRoom: true });
    const alice = kept(await joinRoom(app, moderator, 'Alice'));
    const bob = kept(await connect(app, (await startTicket(app, guest)).ticket));
    bob.command('control', 'join', { display_name: 'Bob' });
    await bob.next('moderation', 'in_waiting_room');
    await alice.next('moderation', 'joined_waiting_room');

    alice.command('echo', 'ping', { seq: 1 });
    bob.command('echo', 'ping', { seq: 2 });
    expect((await alice.next('echo')).payload).toEqual({ action: 'ping', seq: 1 });
    expect((await bob.next('echo')).payload).toEqual({ action: 'ping', seq: 2 });
    await Promise.all([alice.expectNothing('echo'), bob.expectNothing('echo')]);
  });
});
