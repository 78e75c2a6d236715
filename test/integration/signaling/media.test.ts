/**
 * The media namespace over real WebSockets, where no SDP has to reach Janus: the module is on (a
 * Janus URL is configured) but that server does not answer (a closed port on loopback), so these
 * tests show what Convene decides by itself: `media` in `join_success` and in each participant,
 * moderator mute, force mute, the presenter role and its screen-share rule, speaking states, the
 * errors of negotiation commands with nothing to act on, publish and subscribe answered with the
 * app's errors while no Janus server is up, `/ready` saying so, and a tariff without media. The calls
 * with real audio and video are test/media/ (slow tier). Every frame is checked against the contract.
 */
import { describe, expect, it } from 'vitest';
import type { SignalingClient } from '../../support/signaling-client.js';
import { useSignalingRooms } from '../../support/signaling-rooms.js';

/** Port 9 (discard) on loopback: nothing listens there, so the connection is refused at once. */
const NO_JANUS = 'ws://127.0.0.1:9';

const { app, room, join } = useSignalingRooms({ no_media: { disabled_modules: ['media'] } }, {}, {}, { janus_urls: [NO_JANUS] });

const idOf = (client: SignalingClient & { joinSuccess: { id: string } }) => client.joinSuccess.id;

/** The owner Alice (a moderator) and the guest Bob in one room, Bob's arrival seen by Alice. */
async function twoInARoom() {
  const starters = await room();
  const alice = await join(starters.moderator, 'Alice');
  const bob = await join(starters.guest, 'Bob');
  await alice.next('control', 'joined');
  return { alice, bob, starters };
}

describe('media in the join', () => {
  it('tells a joiner its presenter role, who speaks and force mute, and shows each participant with its media', async () => {
    const { alice, bob } = await twoInARoom();
    expect(alice.joinSuccess.tariff.enabled_modules).toContain('media');
    expect(alice.joinSuccess.media).toEqual({ is_presenter: true, speakers: [], force_mute: { type: 'disabled' } });
    expect(bob.joinSuccess.media).toEqual({ is_presenter: true, speakers: [], force_mute: { type: 'disabled' } });
    expect(bob.joinSuccess.participants).toEqual([expect.objectContaining({ id: idOf(alice), media: { is_presenter: true } })]);
  });

  it('has no media where the tariff leaves it out: no key, and its commands are refused', async () => {
    const starters = await room({ tariff: 'no_media' });
    const alice = await join(starters.moderator, 'Alice');
    expect(alice.joinSuccess.tariff.enabled_modules).not.toContain('media');
    expect(alice.joinSuccess).not.toHaveProperty('media');
    alice.command('media', 'update_speaking_state', { is_speaking: true });
    expect((await alice.next('control', 'error')).payload).toMatchObject({ error: 'invalid_namespace' });
  });
});

describe('without a Janus server that answers', () => {
  it('answers publish and subscribe with the app errors, and /ready says media is down', async () => {
    const { alice, bob } = await twoInARoom();
    alice.command('media', 'publish', { target: idOf(alice), media_session_type: 'video', sdp: 'v=0\r\n' });
    expect((await alice.next('media', 'error')).payload).toEqual({ message: 'error', error: 'invalid_sdp_offer' });
    alice.command('media', 'subscribe', { target: idOf(bob), media_session_type: 'video' });
    expect((await alice.next('media', 'error')).payload).toEqual({
      message: 'error',
      error: 'invalid_request_offer',
      source: idOf(bob),
      media_session_type: 'video',
    });
    const ready = await app.request('GET', '/ready');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text_)).toMatchObject({ status: 'ready', media: 'down' });
  });
});

describe('negotiation commands with nothing to act on', () => {
  it('refuses a publish for someone else and a subscribe to oneself, and errs on answers and candidates for no stream', async () => {
    const { alice, bob } = await twoInARoom();
    alice.command('media', 'publish', { target: idOf(bob), media_session_type: 'video', sdp: 'v=0\r\n' });
    expect((await alice.next('media', 'error')).payload.error).toBe('invalid_sdp_offer');
    alice.command('media', 'subscribe', { target: idOf(alice), media_session_type: 'screen' });
    expect((await alice.next('media', 'error')).payload).toEqual({
      message: 'error',
      error: 'invalid_request_offer',
      source: idOf(alice),
      media_session_type: 'screen',
    });
    alice.command('media', 'sdp_answer', { target: idOf(bob), media_session_type: 'video', sdp: 'v=0\r\n' });
    expect((await alice.next('media', 'error')).payload).toEqual({ message: 'error', error: 'handle_sdp_answer' });
    alice.command('media', 'sdp_candidate', {
      target: idOf(alice),
      media_session_type: 'video',
      candidate: { sdpMid: '0', sdpMLineIndex: 0, candidate: 'candidate:1 1 udp 2122260223 127.0.0.1 50000 typ host' },
    });
    expect((await alice.next('media', 'error')).payload).toEqual({ message: 'error', error: 'invalid_candidate' });
    alice.command('media', 'sdp_end_of_candidates', { target: idOf(bob), media_session_type: 'video' });
    expect((await alice.next('media', 'error')).payload).toEqual({ message: 'error', error: 'invalid_end_of_candidates' });
    alice.command('media', 'resubscribe', { target: idOf(bob), media_session_type: 'video' });
    expect((await alice.next('media', 'error')).payload).toMatchObject({ error: 'invalid_request_offer', source: idOf(bob) });
    // a quality choice for a stream not received, and a subscription to someone not in the room: nothing happens
    alice.command('media', 'configure', { target: idOf(bob), media_session_type: 'video', configuration: { video: false } });
    alice.command('media', 'subscribe', { target: '00000000-0000-4000-8000-000000000000', media_session_type: 'video' });
    // an update of a stream never published changes nothing either
    alice.command('media', 'update_media_session', { media_session_type: 'video', media_session_state: { audio: true, video: true } });
    await alice.expectNothing();
    await bob.expectNothing();
  });
});

describe('moderation of media', () => {
  it('asks the targets (or everyone) to mute, and refuses it to others than moderators', async () => {
    const { alice, bob, starters } = await twoInARoom();
    const carol = await join(starters.guest, 'Carol');
    await Promise.all([alice.next('control', 'joined'), bob.next('control', 'joined')]);
    alice.command('media', 'moderator_mute', { targets: [idOf(bob), idOf(alice), '00000000-0000-4000-8000-000000000000'], force: true });
    expect((await bob.next('media', 'request_mute')).payload).toEqual({ message: 'request_mute', issuer: idOf(alice), force: true });
    await Promise.all([alice.expectNothing('media'), carol.expectNothing('media')]);
    alice.command('media', 'moderator_mute', { force: false });
    for (const client of [bob, carol])
      expect((await client.next('media', 'request_mute')).payload).toEqual({ message: 'request_mute', issuer: idOf(alice), force: false });
    await alice.expectNothing('media');
    bob.command('media', 'moderator_mute', { targets: idOf(carol), force: true });
    expect((await bob.next('media', 'error')).payload).toEqual({ message: 'error', error: 'permission_denied' });
    await carol.expectNothing('media');
  });

  it('switches force mute on with its allow list for everyone, shows it to a latecomer, and off again', async () => {
    const { alice, bob, starters } = await twoInARoom();
    bob.command('media', 'moderator_enable_force_mute', { allow_list: [] });
    expect((await bob.next('media', 'error')).payload.error).toBe('permission_denied');
    alice.command('media', 'moderator_enable_force_mute', { allow_list: [idOf(alice), idOf(alice)] });
    for (const client of [alice, bob])
      expect((await client.next('media', 'force_mute_enabled')).payload).toEqual({ message: 'force_mute_enabled', allow_list: [idOf(alice)] });
    const carol = await join(starters.guest, 'Carol');
    expect(carol.joinSuccess.media!.force_mute).toEqual({ type: 'enabled', allow_list: [idOf(alice)] });
    alice.command('media', 'moderator_disable_force_mute');
    for (const client of [alice, bob, carol]) expect((await client.next('media', 'force_mute_disabled')).payload).toEqual({ message: 'force_mute_disabled' });
  });

  it('revokes and grants the presenter role: the participant is told, the others see it, and the moderator gets the list', async () => {
    const { alice, bob } = await twoInARoom();
    alice.command('media', 'revoke_presenter_role', { participant_ids: [idOf(bob), '00000000-0000-4000-8000-000000000000'] });
    expect((await bob.next('media', 'presenter_revoked')).payload).toEqual({ message: 'presenter_revoked' });
    expect((await alice.next('media', 'presenter_role_revoked')).payload).toEqual({ message: 'presenter_role_revoked', participant_ids: [idOf(bob)] });
    expect((await alice.next('control', 'update')).payload).toMatchObject({ id: idOf(bob), media: { is_presenter: false } });
    // a screen of a participant who is no presenter is refused before anything reaches Janus
    bob.command('media', 'publish', { target: idOf(bob), media_session_type: 'screen', sdp: 'v=0\r\n' });
    expect((await bob.next('media', 'error')).payload).toEqual({ message: 'error', error: 'permission_denied' });
    bob.command('media', 'update_media_session', { media_session_type: 'screen', media_session_state: { audio: false, video: true } });
    expect((await bob.next('media', 'error')).payload).toEqual({ message: 'error', error: 'permission_denied' });
    // revoked again: nobody is told twice
    alice.command('media', 'revoke_presenter_role', { participant_ids: [idOf(bob)] });
    expect((await alice.next('media', 'presenter_role_revoked')).payload.participant_ids).toEqual([]);
    alice.command('media', 'grant_presenter_role', { participant_ids: [idOf(bob)] });
    expect((await bob.next('media', 'presenter_granted')).payload).toEqual({ message: 'presenter_granted' });
    expect((await alice.next('media', 'presenter_role_granted')).payload).toEqual({ message: 'presenter_role_granted', participant_ids: [idOf(bob)] });
    expect((await alice.next('control', 'update')).payload).toMatchObject({ id: idOf(bob), media: { is_presenter: true } });
    bob.command('media', 'grant_presenter_role', { participant_ids: [idOf(bob)] });
    expect((await bob.next('media', 'error')).payload.error).toBe('permission_denied');
  });
});

describe('speaking', () => {
  it('tells everyone, the speaker included, and a latecomer sees who speaks', async () => {
    const { alice, bob, starters } = await twoInARoom();
    bob.command('media', 'update_speaking_state', { is_speaking: true });
    const updates = await Promise.all([alice.next('media', 'speaker_updated'), bob.next('media', 'speaker_updated')]);
    expect(updates[0].payload).toEqual(updates[1].payload);
    expect(updates[0].payload).toMatchObject({ participant: idOf(bob), is_speaking: true });
    const carol = await join(starters.guest, 'Carol');
    expect(carol.joinSuccess.media!.speakers).toEqual([{ participant: idOf(bob), is_speaking: true, updated_at: updates[0].payload.updated_at }]);
  });
});

describe('the limits of media commands, at their edges', () => {
  const ids = (count: number) => Array.from({ length: count }, (_, i) => `00000000-0000-4000-8000-${i.toString().padStart(12, '0')}`);

  it('takes 1,000 participant ids and refuses 1,001', async () => {
    const { alice } = await twoInARoom();
    alice.command('media', 'grant_presenter_role', { participant_ids: ids(1000) });
    expect((await alice.next('media', 'presenter_role_granted')).payload.participant_ids).toEqual([]);
    alice.command('media', 'revoke_presenter_role', { participant_ids: ids(1001) });
    expect((await alice.next('control', 'error')).payload).toMatchObject({ error: 'invalid_message' });
    alice.command('media', 'moderator_mute', { targets: ids(1001), force: true });
    expect((await alice.next('control', 'error')).payload).toMatchObject({ error: 'invalid_message' });
    await alice.expectNothing('media');
  });

  it('takes a candidate of 1,024 characters and refuses one of 1,025, and a substream of 2 but not 3', async () => {
    const { alice, bob } = await twoInARoom();
    const candidate = (length: number) => ({ sdpMid: '0', sdpMLineIndex: 0, candidate: 'c'.repeat(length) });
    alice.command('media', 'sdp_candidate', { target: idOf(bob), media_session_type: 'video', candidate: candidate(1024) });
    expect((await alice.next('media', 'error')).payload).toEqual({ message: 'error', error: 'invalid_candidate' });
    alice.command('media', 'sdp_candidate', { target: idOf(bob), media_session_type: 'video', candidate: candidate(1025) });
    expect((await alice.next('control', 'error')).payload).toMatchObject({ error: 'invalid_message' });
    // a choice for a stream not received is ignored; out of range it is refused
    alice.command('media', 'configure', { target: idOf(bob), media_session_type: 'video', configuration: { substream: 2 } });
    alice.command('media', 'configure', { target: idOf(bob), media_session_type: 'video', configuration: { substream: 3 } });
    expect((await alice.next('control', 'error')).payload).toMatchObject({ error: 'invalid_message' });
    await alice.expectNothing('media');
  });
});
