/**
 * The chat across two Convene instances over one database and one Redis, with real WebSocket
 * clients on both: each scope reaches its audience whichever instance each participant is on (a
 * group message the group's members only, a private message its two participants only), a joiner
 * on one instance is shown what was said on the other (and nothing of groups and private chats not
 * its own), a session resumed on the other instance gets its private messages and last-seen
 * timestamps back, one moderator's switch and clearing hold on both, refusals go to their sender
 * alone, a private message to one who left the other instance is refused, and nothing of the chat
 * is left in Redis once the last participant, on either instance, is gone. Needs REDIS_URL: without
 * Redis each instance has its own in-process bus and store, and two instances share nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignalingClient, Starter } from '../../support/signaling-client.js';
import { dbOf, insertInvite, insertRoom, inviteToRoomEvent, redisUrl } from '../../support/signaling.js';
import { roomKeysLeft, useSignalingRooms } from '../../support/signaling-rooms.js';
import type { TestApp } from '../../support/test-app.js';

if (!redisUrl) console.log('REDIS_URL is not set: the two-instance chat tests need Redis and are skipped in this run');

/** After the last expected frame, how long a stray or duplicate frame is given to show up. */
const GRACE_MS = 400;

describe.skipIf(!redisUrl)('the chat on two instances over one database and Redis', () => {
  const { app: one, join, openResuming } = useSignalingRooms();
  const two = {} as TestApp;
  beforeAll(async () => {
    Object.assign(two, await one.withConfig({}));
  });
  afterAll(() => two.close?.());

  let logins = 0;
  const login = (name: string, groups: string[]) => one.login(`chat2-${name}${++logins}`, { x_grp: groups });

  /**
   * Alice (owner, /dev) and Gina (guest) on instance one, Dev (/dev) and Olaf (/ops) on instance
   * two, the joins they were told of out of the way.
   */
  async function splitRoom() {
    const [owner, dev, ops] = [await login('owner', ['/dev']), await login('dev', ['/dev']), await login('ops', ['/ops'])];
    const roomId = await insertRoom(one, owner);
    await inviteToRoomEvent(one, roomId, owner, dev);
    const event = await dbOf(one).selectFrom('events').select('id').where('room_id', '=', roomId).executeTakeFirstOrThrow();
    await dbOf(one).insertInto('event_invites').values({ event_id: event.id, invitee: ops.id, created_by: owner.id }).execute();
    const starters = {
      moderator: { roomId, token: owner.accessToken } as Starter,
      developer: { roomId, token: dev.accessToken } as Starter,
      operator: { roomId, token: ops.accessToken } as Starter,
      guest: { roomId, inviteCode: await insertInvite(one, roomId, owner) } as Starter,
    };
    const alice = await join(starters.moderator, 'Alice', one);
    const gina = await join(starters.guest, 'Gina', one);
    const dave = await join(starters.developer, 'Dev', two);
    const olaf = await join(starters.operator, 'Olaf', two);
    for (const client of [alice, alice, alice, gina, gina, dave]) await client.next('control', 'joined');
    return { roomId, starters, alice, gina, dave, olaf, everyone: [alice, gina, dave, olaf] };
  }

  const id = (client: { joinSuccess: { id: string } }) => client.joinSuccess.id;
  const quiet = (clients: SignalingClient[]) => Promise.all(clients.map((client) => client.expectNothing('chat', undefined, GRACE_MS)));

  it('delivers each scope to its audience, once, on both instances', async () => {
    const { alice, gina, dave, olaf, everyone } = await splitRoom();
    dave.command('chat', 'send_message', { scope: 'global', content: 'Hello all!' });
    for (const client of everyone) expect((await client.next('chat', 'message_sent')).payload).toMatchObject({ source: id(dave), scope: 'global' });

    dave.command('chat', 'send_message', { scope: 'group', target: '/dev', content: 'Hello dev!' });
    for (const client of [alice, dave]) expect((await client.next('chat', 'message_sent')).payload).toMatchObject({ scope: 'group', target: '/dev' });

    gina.command('chat', 'send_message', { scope: 'private', target: id(olaf), content: 'Hello Olaf!' });
    for (const client of [gina, olaf]) expect((await client.next('chat', 'message_sent')).payload).toMatchObject({ scope: 'private', target: id(olaf) });
    await quiet(everyone);
  });

  it('shows a joiner on one instance what was said on the other', async () => {
    const { alice, dave, starters } = await splitRoom();
    alice.command('chat', 'send_message', { scope: 'global', content: 'Hello all!' });
    alice.command('chat', 'send_message', { scope: 'group', target: '/dev', content: 'Hello dev!' });
    for (let i = 0; i < 2; i++) await dave.next('chat', 'message_sent');
    const late = await join(starters.developer, 'Dev on the phone', two);
    expect(late.joinSuccess.chat).toMatchObject({
      room_history: [expect.objectContaining({ source: id(alice), content: 'Hello all!' })],
      groups_history: [{ name: '/dev', history: [expect.objectContaining({ content: 'Hello dev!' })] }],
    });
    await late.expectNothing('chat', undefined, GRACE_MS);
  });

  it("holds one moderator's switch and clearing on the other instance", async () => {
    const { alice, dave, everyone, starters } = await splitRoom();
    dave.command('chat', 'send_message', { scope: 'global', content: 'Hello all!' });
    for (const client of everyone) await client.next('chat', 'message_sent');
    alice.command('chat', 'disable_chat');
    for (const client of everyone) expect((await client.next('chat', 'chat_disabled')).payload).toEqual({ message: 'chat_disabled', issued_by: id(alice) });
    dave.command('chat', 'send_message', { scope: 'global', content: 'Hello?' });
    expect((await dave.next('chat', 'error')).payload.error).toBe('chat_disabled');
    alice.command('chat', 'clear_history');
    for (const client of everyone) await client.next('chat', 'history_cleared');
    alice.command('chat', 'enable_chat');
    for (const client of everyone) await client.next('chat', 'chat_enabled');
    const late = await join(starters.operator, 'Olaf again', two);
    expect(late.joinSuccess.chat).toMatchObject({ enabled: true, room_history: [] });
    await quiet(everyone);
  });

  it('shows a joiner on the other instance nothing of a group it is not in, nor of the private chats of others', async () => {
    const { alice, gina, dave, olaf, starters } = await splitRoom();
    dave.command('chat', 'send_message', { scope: 'group', target: '/dev', content: 'Hello dev!' });
    gina.command('chat', 'send_message', { scope: 'private', target: id(olaf), content: 'Hello Olaf!' });
    await alice.next('chat', 'message_sent');
    await olaf.next('chat', 'message_sent');
    const olafAgain = await join(starters.operator, 'Olaf again', one);
    const guest = await join(starters.guest, 'Gina again', two);
    expect(olafAgain.joinSuccess.chat).toMatchObject({ room_history: [], groups_history: [{ name: '/ops', history: [] }], private_history: [] });
    expect(guest.joinSuccess.chat).toMatchObject({ room_history: [], groups_history: [], private_history: [] });
  });

  it("keeps a participant's private messages and last-seen timestamps for its session resumed on the other instance", async () => {
    const { alice, gina, dave, starters } = await splitRoom();
    gina.command('chat', 'send_message', { scope: 'private', target: id(dave), content: 'Hello Dev!' });
    await dave.next('chat', 'message_sent');
    dave.command('chat', 'set_last_seen_timestamp', { scope: 'global', timestamp: '2026-05-04T09:30:00Z' });
    dave.command('chat', 'set_last_seen_timestamp', { scope: 'group', target: '/dev', timestamp: '2026-05-04T09:31:00Z' });
    dave.command('chat', 'set_last_seen_timestamp', { scope: 'private', target: id(gina), timestamp: '2026-05-04T09:32:00Z' });
    await dave.expectNothing(undefined, undefined, GRACE_MS);
    await dave.close();
    await alice.next('control', 'left');
    // Dev comes back on instance one
    const back = await openResuming(starters.developer, dave.resumption);
    back.command('control', 'join', { display_name: 'Dev' });
    const { payload } = await back.next('control', 'join_success');
    expect(payload.id).toBe(id(dave));
    expect(payload.chat).toMatchObject({
      private_history: [{ correspondent: id(gina), history: [expect.objectContaining({ source: id(gina), content: 'Hello Dev!' })] }],
      last_seen_timestamp_global: '2026-05-04T09:30:00Z',
      last_seen_timestamps_group: { '/dev': '2026-05-04T09:31:00Z' },
      last_seen_timestamps_private: { [id(gina)]: '2026-05-04T09:32:00Z' },
    });
  });

  it('answers a refused command on instance two to its sender alone, and nobody on either instance hears of it', async () => {
    const { dave, everyone } = await splitRoom();
    const refusals: Array<[string, Record<string, unknown>, string]> = [
      ['disable_chat', {}, 'insufficient_permissions'],
      ['clear_history', {}, 'insufficient_permissions'],
      ['send_message', { scope: 'global', content: ' ' }, 'empty_message'],
      ['send_message', { scope: 'global', content: 'x'.repeat(4097) }, 'max_characters_exceeded'],
      ['send_message', { scope: 'group', target: '/ops', content: 'Hello ops!' }, 'invalid_target'],
    ];
    for (const [action, fields, error] of refusals) {
      dave.command('chat', action, fields);
      expect((await dave.next('chat', 'error')).payload.error).toBe(error);
    }
    await quiet(everyone);
  });

  it('refuses a private message to one who left the other instance', async () => {
    const { alice, olaf } = await splitRoom();
    await olaf.close();
    await alice.next('control', 'left');
    alice.command('chat', 'send_message', { scope: 'private', target: id(olaf), content: 'Still there?' });
    expect((await alice.next('chat', 'error')).payload.error).toBe('invalid_target');
  });

  it('leaves nothing of the chat in Redis once the last participant, on either instance, is gone', async () => {
    const { roomId, alice, gina, dave, olaf } = await splitRoom();
    gina.command('chat', 'send_message', { scope: 'private', target: id(olaf), content: 'Hello Olaf!' });
    dave.command('chat', 'send_message', { scope: 'group', target: '/dev', content: 'Hello dev!' });
    dave.command('chat', 'set_last_seen_timestamp', { scope: 'global', timestamp: '2026-05-04T09:30:00Z' });
    dave.command('chat', 'send_message', { scope: 'global', content: 'Bye all' });
    await olaf.next('chat', 'message_sent');
    for (let i = 0; i < 2; i++) await alice.next('chat', 'message_sent');
    const key = (name: string) => `convene:signaling:room:${roomId}:chat:${name}`;
    expect((await roomKeysLeft(roomId, 0)).filter((name) => name.includes(':chat:'))).toEqual(
      [
        key('keys'),
        key('history:global'),
        key('history:group:/dev'),
        key(`history:private:${[id(gina), id(olaf)].sort().join(':')}`),
        key(`correspondents:${id(gina)}`),
        key(`correspondents:${id(olaf)}`),
        key(`last_seen:${id(dave)}`),
      ].sort(),
    );
    for (const client of [alice, olaf, gina, dave]) await client.close();
    expect(await roomKeysLeft(roomId)).toEqual([]);
  });
});
