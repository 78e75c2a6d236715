/**
 * A participant's own streams: `publish` (the first one makes the Janus publisher, later ones
 * renegotiate on it), `publish_complete` and `update_media_session` (what it sends: microphone and
 * camera on or off, kept in the store and applied to the Janus publisher), `unpublish`, and a
 * stream's end however it comes (unpublish, Janus hangup, revoked presenter role, departure).
 */
import type { MediaPublishCommand, MediaPublishCompleteCommand } from '../../../../generated/signaling/types.js';
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import { sdpSent, onHandleEvent } from './handle-events.js';
import { janusRoomFor } from './janus-rooms.js';
import { fail, mayShareScreen, NAMESPACE, publishUpdate, type MediaParts } from './media-context.js';
import type { LocalHandle } from './local-handles.js';
import { endStream, release } from './stream-end.js';
import type { MediaSessionState, MediaSessionType } from './media-store.js';

/** `publish_complete` and `update_media_session` carry the same fields. */
type MediaSessionCommand = Omit<MediaPublishCompleteCommand['payload'], 'action'>;

export async function publish(parts: MediaParts, session: Session, command: MediaPublishCommand['payload'], hub: RoomHub): Promise<void> {
  const own = session.participant.id;
  const type = command.media_session_type;
  if (command.target !== own) return fail(session, 'invalid_sdp_offer');
  if (type === 'screen' && !(await mayShareScreen(parts, session))) return fail(session, 'permission_denied');
  try {
    const local = parts.handles.get(session, 'publisher', own, type) ?? (await newPublisher(parts, session, hub, type));
    const { jsep } = await local.handle!.request(
      { request: 'configure', bitrate: type === 'screen' ? parts.config.max_screen_bitrate : parts.config.max_video_bitrate },
      { type: 'offer', sdp: command.sdp },
    );
    if (jsep?.type !== 'answer') throw new Error('Janus answered the offer without an SDP answer');
    session.send(NAMESPACE, { message: 'sdp_answer', source: own, media_session_type: type, sdp: jsep.sdp });
    sdpSent(local);
  } catch (err) {
    parts.deps.logger.warn({ err, roomId: hub.roomId, participantId: own, type }, 'media: a publish failed');
    fail(session, 'invalid_sdp_offer');
  }
}

/** Attaches a publisher handle on the room's server and joins the Janus room with a new feed id. */
async function newPublisher(parts: MediaParts, session: Session, hub: RoomHub, type: MediaSessionType): Promise<LocalHandle> {
  const own = session.participant.id;
  const room = await janusRoomFor(parts, hub.roomId);
  const local = parts.handles.add({ session, hub, role: 'publisher', type, source: own, server: room.server });
  try {
    local.handle = await parts.servers.attach(room.server, (event) => onHandleEvent(parts, local, event));
    const feedId = await parts.store.nextFeedId(hub.roomId);
    await local.handle.request({ request: 'join', ptype: 'publisher', room: room.janusRoomId, id: feedId, display: `${own}|${type}` });
    await parts.store.setPublisher(hub.roomId, own, type, { feedId });
    return local;
  } catch (err) {
    await release(parts, local);
    throw err;
  }
}

export async function publishComplete(parts: MediaParts, session: Session, command: MediaSessionCommand, hub: RoomHub): Promise<void> {
  const type = command.media_session_type;
  const state = { audio: command.media_session_state.audio, video: command.media_session_state.video };
  // force mute: a microphone that may not be on is taken as off, without an error (the reference's way)
  if (type === 'video' && state.audio && (await forceMuted(parts, session))) state.audio = false;
  await applyState(parts, session, type, state, hub);
}

export async function updateMediaSession(parts: MediaParts, session: Session, command: MediaSessionCommand, hub: RoomHub): Promise<void> {
  const own = session.participant.id;
  const type = command.media_session_type;
  const state = { audio: command.media_session_state.audio, video: command.media_session_state.video };
  if (type === 'screen' && !(await mayShareScreen(parts, session))) return fail(session, 'permission_denied');
  if (type === 'video' && state.audio && (await forceMuted(parts, session))) return fail(session, 'permission_denied');
  const previous = (await parts.store.sessionStates(hub.roomId, [own])).get(own)?.[type];
  if (!previous) return; // nothing published of that type: nothing to update
  await applyState(parts, session, type, state, hub);
  if (previous.audio && !state.audio) await setSpeaking(parts, session, hub, false);
}

/** Keeps the state, applies it to the Janus publisher, and shows it to the others. */
export async function applyState(parts: MediaParts, session: Session, type: MediaSessionType, state: MediaSessionState, hub: RoomHub): Promise<void> {
  await parts.store.setSessionState(hub.roomId, session.participant.id, type, state);
  const local = parts.handles.get(session, 'publisher', session.participant.id, type);
  await local?.handle?.request({ request: 'configure', audio: state.audio, video: state.video }).catch((err: unknown) => {
    parts.deps.logger.warn({ err, roomId: hub.roomId, type }, 'media: the publisher could not be configured');
  });
  await publishUpdate(parts, session, hub);
}

async function forceMuted(parts: MediaParts, session: Session): Promise<boolean> {
  const forceMute = await parts.store.forceMute(session.room.roomId);
  return forceMute.type === 'enabled' && !forceMute.allow_list.includes(session.participant.id);
}

export async function unpublish(parts: MediaParts, session: Session, type: MediaSessionType, hub: RoomHub): Promise<void> {
  const local = parts.handles.get(session, 'publisher', session.participant.id, type);
  if (local) await release(parts, local);
  await endStream(parts, session, hub, type);
}

/** Keeps the participant's speaking state and tells the room (the speaker included). */
export async function setSpeaking(parts: MediaParts, session: Session, hub: RoomHub, isSpeaking: boolean): Promise<void> {
  const state = { participant: session.participant.id, is_speaking: isSpeaking, updated_at: new Date(parts.deps.scheduler.now()).toISOString() };
  await parts.store.setSpeaking(hub.roomId, state);
  await hub.publish({ namespace: NAMESPACE, payload: { message: 'speaker_updated', ...state }, audience: { to: 'room' } });
}
