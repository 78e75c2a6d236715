/**
 * The webhook events of signaling (issue 20) over real sockets, to a real receiver on loopback: a
 * room's session starting with its first participant and ending with its last, participants of
 * each kind joining and leaving with their roles, the waiting room, and the timer. Each delivery
 * is signed and matches the contract; none carries an invite code.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkWebhook } from '../../support/contract.js';
import { send } from '../../support/events.js';
import { useSignalingRooms } from '../../support/signaling-rooms.js';
import type { TestUser } from '../../support/test-app.js';
import { startWebhookReceiver, verify, type WebhookReceiver } from '../../support/webhook-receiver.js';

const rooms = useSignalingRooms({}, {}, { allow_http: true, allow_private: true, poll_interval_ms: 20, retry_base_ms: 50 });
const { app, room, join, open, callIn } = rooms;
let receiver: WebhookReceiver;
beforeEach(async () => {
  receiver = await startWebhookReceiver();
});
afterEach(() => receiver.close());

async function subscribe(owner: TestUser): Promise<string> {
  const res = await send(app, 'POST', '/webhook_subscriptions', { token: owner.accessToken, body: { url: receiver.url } });
  expect(res.status).toBe(201);
  return res.json.secret;
}

const summary = (got: { json: { type: string; data: Record<string, unknown> } }[]) =>
  got.map(({ json }) => [json.type, json.data.kind ?? json.data.reason ?? null, json.data.role ?? null]);

describe('signaling webhooks', () => {
  it('reports the room’s session, its participants (with kind and role) and its timer, in order', async () => {
    const { owner, moderator, guest } = await room();
    const secret = await subscribe(owner);
    const alice = await join(moderator, 'Alice');
    const gina = await join(guest, 'Gina');
    await alice.next('control', 'joined');
    alice.command('timer', 'start', { kind: 'countdown', duration: 300, title: 'Break', enable_ready_check: false });
    const { payload: started } = await alice.next('timer', 'started');
    alice.command('timer', 'stop', { timer_id: started.timer_id });
    await alice.next('timer', 'stopped');
    await gina.close();
    await alice.next('control', 'left');
    await alice.close();

    const got = await receiver.waitFor(8);
    expect(summary(got)).toEqual([
      ['room.started', null, null],
      ['participant.joined', 'user', 'moderator'],
      ['participant.joined', 'guest', 'guest'],
      ['timer.started', 'countdown', null],
      ['timer.stopped', 'by_moderator', null],
      ['participant.left', 'guest', 'guest'],
      ['participant.left', 'user', 'moderator'],
      ['room.ended', null, null],
    ]);
    for (const delivery of got) {
      checkWebhook(delivery.headers, delivery.body);
      expect(verify(secret, delivery.headers, delivery.body)).toBe(true);
      expect(delivery.body).not.toContain((guest as { inviteCode: string }).inviteCode);
    }
    expect(got[1]!.json.data).toMatchObject({ display_name: 'Alice', user_id: owner.id });
    expect(got[2]!.json.data.user_id).toBeUndefined();
    expect(got[3]!.json.data).toMatchObject({ timer_id: started.timer_id, title: 'Break', ends_at: started.ends_at });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.received).toHaveLength(8); // once each
  });

  it('reports a participant entering the waiting room', async () => {
    const { owner, roomId, moderator, guest } = await room({ waitingRoom: true });
    await subscribe(owner);
    await join(moderator, 'Alice');
    const waiting = await open(guest);
    waiting.command('control', 'join', { display_name: 'Wanda' });
    await waiting.next('moderation', 'in_waiting_room');
    const got = await receiver.waitFor(3);
    expect(summary(got)).toEqual([
      ['room.started', null, null],
      ['participant.joined', 'user', 'moderator'],
      ['waiting_room.entered', 'guest', null],
    ]);
    expect(got[2]!.json.data).toMatchObject({ room_id: roomId, display_name: 'Wanda' });
    for (const delivery of got) checkWebhook(delivery.headers, delivery.body);
  });

  it('names a phone caller call_in', async () => {
    const { owner, roomId } = await room();
    await subscribe(owner);
    const caller = await callIn(roomId);
    caller.command('control', 'join', { display_name: 'Phone' });
    await caller.next('control', 'join_success');
    const got = await receiver.waitFor(2);
    expect(got.map((r) => r.json.type)).toEqual(['room.started', 'participant.joined']);
    expect(got[1]!.json.data).toMatchObject({ kind: 'call_in', display_name: 'Phone' });
    expect(got[1]!.json.data.user_id).toBeUndefined();
    checkWebhook(got[1]!.headers, got[1]!.body);
  });

  it('sends nothing to another user’s subscription', async () => {
    const { moderator } = await room();
    const other = await rooms.login('other');
    await subscribe(other);
    const alice = await join(moderator, 'Alice');
    await alice.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received).toHaveLength(0);
  });
});
