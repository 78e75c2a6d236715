/**
 * Receiving another participant's stream: `subscribe` attaches a subscriber handle on the room's
 * Janus server and sends Janus's offer (`sdp_offer`); `sdp_answer` starts it; `resubscribe` asks
 * Janus for an ICE restart; `configure` picks the simulcast layer or pauses the video. There is no
 * unsubscribe command: a subscription ends with its stream (STREAM_ENDED), with Janus's hangup, or
 * with the subscriber's departure. Candidates of either direction are routed here too: a `target`
 * equal to one's own id means one's publisher.
 */
import type {
  MediaConfigureCommand,
  MediaResubscribeCommand,
  MediaSdpAnswerCommand,
  MediaSdpCandidateCommand,
  MediaSdpEndOfCandidatesCommand,
  MediaSubscribeCommand,
} from '../../../../generated/signaling/types.js';
import type { IceCandidate } from '../../../media/media-servers.js';
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import { onHandleEvent, sdpSent } from './handle-events.js';
import { fail, NAMESPACE, type MediaError, type MediaParts } from './media-context.js';
import type { LocalHandle } from './local-handles.js';
import type { MediaSessionType } from './media-store.js';
import { release } from './stream-end.js';

/** The validated payloads of the commands handled here (the connection checked them against the contract). */
type Payload<C extends { payload: unknown }> = C['payload'];
type StreamCommand = Pick<Payload<MediaResubscribeCommand>, 'target' | 'media_session_type'>;

export async function subscribe(parts: MediaParts, session: Session, command: Payload<MediaSubscribeCommand>, hub: RoomHub): Promise<void> {
  const { target, media_session_type: type } = command;
  const stream = { source: target, media_session_type: type };
  if (target === session.participant.id) return fail(session, 'invalid_request_offer', stream);
  // a target that left meanwhile: nothing to answer (the client hears `left`)
  if (!(await parts.control().member(hub.roomId, target))) return;
  const previous = parts.handles.get(session, 'subscriber', target, type);
  if (previous) await release(parts, previous);
  const [publisher, room] = await Promise.all([parts.store.publisher(hub.roomId, target, type), parts.store.janusRoom(hub.roomId)]);
  if (!publisher || !room || !parts.servers.isUp(room.server)) return fail(session, 'invalid_request_offer', stream);
  const local = parts.handles.add({ session, hub, role: 'subscriber', type, source: target, server: room.server });
  try {
    local.handle = await parts.servers.attach(room.server, (event) => onHandleEvent(parts, local, event));
    const { jsep } = await local.handle.request({
      request: 'join',
      ptype: 'subscriber',
      room: room.janusRoomId,
      feed: publisher.feedId,
      ...(command.without_video ? { offer_video: false } : {}),
    });
    sendOffer(local, jsep);
  } catch (err) {
    parts.deps.logger.warn({ err, roomId: hub.roomId, target, type }, 'media: a subscribe failed');
    await release(parts, local);
    fail(session, 'invalid_request_offer', stream);
  }
}

function sendOffer(local: LocalHandle, jsep: { type: string; sdp: string } | undefined): void {
  if (jsep?.type !== 'offer') throw new Error('Janus answered without an SDP offer');
  local.session.send(NAMESPACE, { message: 'sdp_offer', source: local.source, media_session_type: local.type, sdp: jsep.sdp });
  sdpSent(local);
}

/** An ICE restart: Janus makes a new offer on the same subscription. */
export async function resubscribe(parts: MediaParts, session: Session, command: Payload<MediaResubscribeCommand>): Promise<void> {
  const stream = { source: command.target, media_session_type: command.media_session_type };
  const local = parts.handles.get(session, 'subscriber', command.target, command.media_session_type);
  if (!local?.handle) return fail(session, 'invalid_request_offer', stream);
  local.sdpSent = false;
  try {
    const { jsep } = await local.handle.request({ request: 'configure', restart: true });
    sendOffer(local, jsep);
  } catch (err) {
    parts.deps.logger.warn({ err, target: command.target }, 'media: a resubscribe failed');
    fail(session, 'invalid_request_offer', stream);
  }
}

export async function sdpAnswer(parts: MediaParts, session: Session, command: Payload<MediaSdpAnswerCommand>): Promise<void> {
  const local = parts.handles.get(session, 'subscriber', command.target, command.media_session_type);
  await onHandle(parts, session, local, 'handle_sdp_answer', (handle) => handle.request({ request: 'start' }, { type: 'answer', sdp: command.sdp }));
}

export async function candidate(parts: MediaParts, session: Session, command: Payload<MediaSdpCandidateCommand>): Promise<void> {
  const trickled: IceCandidate = { sdpMLineIndex: command.candidate.sdpMLineIndex, candidate: command.candidate.candidate };
  await onHandle(parts, session, handleOf(parts, session, command), 'invalid_candidate', (handle) => handle.trickle(trickled));
}

export async function endOfCandidates(parts: MediaParts, session: Session, command: Payload<MediaSdpEndOfCandidatesCommand>): Promise<void> {
  await onHandle(parts, session, handleOf(parts, session, command), 'invalid_end_of_candidates', (handle) => handle.trickle({ completed: true }));
}

/** Chooses the simulcast layer (`substream`) or pauses the video; a stream not subscribed is ignored. */
export async function configure(parts: MediaParts, session: Session, command: Payload<MediaConfigureCommand>): Promise<void> {
  const local = parts.handles.get(session, 'subscriber', command.target, command.media_session_type);
  if (!local?.handle) return;
  const { video, substream } = command.configuration;
  await local.handle
    .request({ request: 'configure', ...(video !== undefined ? { video } : {}), ...(substream !== undefined ? { substream } : {}) })
    .catch((err: unknown) => {
      parts.deps.logger.warn({ err, target: command.target }, 'media: a configure failed');
      fail(session, 'invalid_configure_request', { source: command.target, media_session_type: command.media_session_type });
    });
}

/** One's own id names one's publisher; another's, one's subscription to it. */
function handleOf(parts: MediaParts, session: Session, { target, media_session_type: type }: StreamCommand): LocalHandle | undefined {
  const role = target === session.participant.id ? 'publisher' : 'subscriber';
  return parts.handles.get(session, role, target, type);
}

async function onHandle(
  parts: MediaParts,
  session: Session,
  local: LocalHandle | undefined,
  error: MediaError,
  act: (handle: NonNullable<LocalHandle['handle']>) => Promise<unknown>,
): Promise<void> {
  if (!local?.handle) return fail(session, error);
  try {
    await act(local.handle);
  } catch (err) {
    parts.deps.logger.debug({ err, error }, 'media: Janus refused a request');
    fail(session, error);
  }
}

/** A stream ended: this instance's subscriptions to it are detached. */
export async function streamEnded(parts: MediaParts, roomId: string, source: string, type: MediaSessionType): Promise<void> {
  await Promise.all(parts.handles.subscribersTo(roomId, source, type).map((local) => release(parts, local)));
}
