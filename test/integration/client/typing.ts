/**
 * Type-level tests of the typed signaling client, checked by `npm run typecheck` (tsc covers test/)
 * and never run: every `@ts-expect-error` line must fail to compile (an unneeded one is itself an
 * error), so a command, field or message the contract does not have, or a frame read as another
 * message's, fails the type check. The lines without the directive must compile.
 */
import WebSocket from 'ws';
import { connectSignaling, type EventFrame, type SignalingConnection } from '../../../packages/client/src/index.js';

export function commands(connection: SignalingConnection): void {
  connection.send('timer', { action: 'start', kind: 'countdown', duration: 60, title: 'Break', enable_ready_check: false });
  connection.send('timer', { action: 'stop', timer_id: '7e9a1c3b-5d2f-4e84-a6b0-9c8d7e6f5a42', reason: 'done' });
  connection.send('control', { action: 'join', display_name: 'Alice' });
  connection.send('moderation', { action: 'accept', target: '7e9a1c3b-5d2f-4e84-a6b0-9c8d7e6f5a42' });
  connection.send('echo', { action: 'ping', anything: [1, 2] }); // echo takes any action and fields
  // @ts-expect-error an action the namespace does not have
  connection.send('timer', { action: 'begin' });
  // @ts-expect-error a field the command does not have
  connection.send('timer', { action: 'stop', timer_id: 'x', colour: 'red' });
  // @ts-expect-error a field of the wrong type
  connection.send('timer', { action: 'start', kind: 'stopwatch', enable_ready_check: 'yes' });
  // @ts-expect-error a value outside the field's enum
  connection.send('timer', { action: 'start', kind: 'hourglass', enable_ready_check: false });
  // @ts-expect-error a required field missing
  connection.send('control', { action: 'join' });
  // @ts-expect-error another namespace's action
  connection.send('moderation', { action: 'join', display_name: 'Alice' });
  // @ts-expect-error a namespace the contract does not have
  connection.send('nope', { action: 'join' });

  const peer = '7e9a1c3b-5d2f-4e84-a6b0-9c8d7e6f5a42';
  connection.send('media', { action: 'publish', target: peer, media_session_type: 'video', sdp: 'v=0' });
  connection.send('media', { action: 'publish_complete', media_session_type: 'video', media_session_state: { audio: true, video: true, video_settings: 2 } });
  connection.send('media', {
    action: 'sdp_candidate',
    target: peer,
    media_session_type: 'screen',
    candidate: { sdpMid: '0', sdpMLineIndex: 0, candidate: 'candidate:1' },
  });
  connection.send('media', { action: 'configure', target: peer, media_session_type: 'video', configuration: { substream: 2 } });
  connection.send('media', { action: 'moderator_mute', targets: [peer], force: true });
  connection.send('media', { action: 'moderator_mute', force: false });
  connection.send('media', { action: 'update_speaking_state', is_speaking: true });
  // @ts-expect-error a publish needs its offer
  connection.send('media', { action: 'publish', target: peer, media_session_type: 'video' });
  // @ts-expect-error a stream is `video` or `screen`
  connection.send('media', { action: 'unpublish', media_session_type: 'camera' });
  const snakeCandidate = { sdp_m_line_index: 0, candidate: 'candidate:1' };
  // @ts-expect-error the candidate's fields are the browser's camelCase ones
  connection.send('media', { action: 'sdp_candidate', target: peer, media_session_type: 'video', candidate: snakeCandidate });
  // @ts-expect-error there is no unsubscribe command
  connection.send('media', { action: 'unsubscribe', target: peer, media_session_type: 'video' });

  connection.send('moderation', { action: 'enable_waiting_room' });
  connection.send('moderation', { action: 'disable_waiting_room' });
  connection.send('moderation', { action: 'change_display_name', target: '7e9a1c3b-5d2f-4e84-a6b0-9c8d7e6f5a42', new_name: 'Bob' });
  // @ts-expect-error the new name is `new_name`, as the reference's web app sends it
  connection.send('moderation', { action: 'change_display_name', target: '7e9a1c3b-5d2f-4e84-a6b0-9c8d7e6f5a42', display_name: 'Bob' });

  connection.send('chat', { action: 'send_message', scope: 'group', target: '/dev', content: 'Hello dev!' });
  connection.send('chat', { action: 'set_last_seen_timestamp', scope: 'global', timestamp: '2026-05-04T09:30:00Z' });
  connection.send('chat', { action: 'clear_history' });
  // @ts-expect-error a scope the contract does not have
  connection.send('chat', { action: 'send_message', scope: 'everyone', content: 'Hello?' });
  // @ts-expect-error a message needs its content
  connection.send('chat', { action: 'send_message', scope: 'global' });
  // @ts-expect-error the moderators' switch takes no fields
  connection.send('chat', { action: 'disable_chat', for_minutes: 5 });
  // @ts-expect-error a timestamp is a string
  connection.send('chat', { action: 'set_last_seen_timestamp', scope: 'global', timestamp: Date.now() });
}

export async function events(connection: SignalingConnection): Promise<void> {
  const started = await connection.next('timer', 'started', { timeoutMs: 1_000 });
  const kind: 'countdown' | 'stopwatch' = started.payload.kind;
  const stamped: string = started.timestamp;
  // @ts-expect-error `started` has no such field
  void started.payload.reason;
  // @ts-expect-error a message the namespace does not have
  await connection.next('timer', 'begun');
  // @ts-expect-error a command is no event
  await connection.next('timer', 'start');

  const sent = await connection.next('chat', 'message_sent');
  const scope: 'global' | 'group' | 'private' = sent.payload.scope;
  // @ts-expect-error `message_sent` has no timestamp of its own (the frame has)
  void sent.payload.timestamp;
  const chatError = await connection.next('chat', 'error');
  // @ts-expect-error an error code the chat does not have
  if (chatError.payload.error === 'timer_already_running') void chatError;

  const offer = await connection.next('media', 'sdp_offer');
  const remote: [string, 'video' | 'screen', string] = [offer.payload.source, offer.payload.media_session_type, offer.payload.sdp];
  const candidate = await connection.next('media', 'sdp_candidate');
  const line: number = candidate.payload.candidate.sdpMLineIndex;
  // @ts-expect-error the server never sends sdpMid
  void candidate.payload.candidate.sdpMid;
  const mediaError = await connection.next('media', 'error');
  if (mediaError.payload.error === 'invalid_request_offer') void mediaError.payload.source;
  // @ts-expect-error an error code the media module does not have
  if (mediaError.payload.error === 'chat_disabled') void mediaError;
  void [remote, line];

  const renamed = await connection.next('moderation', 'display_name_changed');
  const names: [string, string, string] = [renamed.payload.old_name, renamed.payload.new_name, renamed.payload.issued_by];
  await connection.next('moderation', 'waiting_room_disabled');
  const moderationError = await connection.next('moderation', 'error');
  if (moderationError.payload.error === 'cannot_change_name_of_registered_users' || moderationError.payload.error === 'invalid_display_name') void names;
  // @ts-expect-error `join`'s error code is control's, not moderation's
  if (moderationError.payload.error === 'invalid_username') void names;

  const unsubscribe = connection.on('control', 'joined', (frame) => {
    const name: string = frame.payload.control.display_name;
    // @ts-expect-error `joined` is not `left`
    void frame.payload.reason;
    void name;
  });
  unsubscribe();

  // '*': any message of the namespace, told apart by `message`
  const any = await connection.next('timer', '*');
  if (any.payload.message === 'stopped') {
    const why: 'by_moderator' | 'expired' | 'creator_left' = any.payload.kind;
    void why;
  }
  const echoed: EventFrame<'echo', '*'> = await connection.next('echo', '*');
  const action: string = echoed.payload.action;

  const answer = await connection.join('Alice');
  if (answer.result === 'join_success') {
    const ids: string[] = answer.frame.payload.participants.map((participant) => participant.id);
    const presenting: boolean[] = answer.frame.payload.participants.map((participant) => participant.media?.screen !== undefined);
    const forceMute: 'enabled' | 'disabled' | undefined = answer.frame.payload.media?.force_mute.type;
    void [ids, presenting, forceMute];
  } else {
    // @ts-expect-error only `join_success` lists the participants
    void answer.frame.payload.participants;
  }
  void [kind, stamped, action, scope];
}

export async function sockets(): Promise<void> {
  // the browser's and Node's global WebSocket and the ws package's all fit
  await connectSignaling({ url: 'http://localhost:11311', ticket: 't', WebSocket: globalThis.WebSocket });
  await connectSignaling({ url: 'ws://localhost:11311', ticket: 't', WebSocket, validate: true });
  // @ts-expect-error a ticket is required
  await connectSignaling({ url: 'http://localhost:11311' });
}
