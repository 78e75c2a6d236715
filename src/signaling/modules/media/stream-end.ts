/**
 * The end of a stream, however it comes (unpublish, Janus's hangup, a revoked presenter role, a
 * departure, a lost Janus server), and the release of a handle: apart from streams.ts so that the
 * handle events (handle-events.ts), which end streams, and the publishing, which makes handles
 * that report to handle-events.ts, do not import each other.
 */
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import { NAMESPACE, publishUpdate, type MediaParts } from './media-context.js';
import type { LocalHandle } from './local-handles.js';
import type { MediaSessionType } from './media-store.js';

/** The room message that tells every instance a stream ended: its subscribers there are detached. Never sent to a client. */
export const STREAM_ENDED = 'stream_ended';

/** Forgets a handle and detaches it from Janus (which hangs up its PeerConnection). */
export async function release(parts: MediaParts, local: LocalHandle): Promise<void> {
  if (!parts.handles.remove(local)) return;
  await local.handle?.detach().catch((err: unknown) => parts.deps.logger.debug({ err }, 'media: a detach failed'));
}

/**
 * The participant's stream of `type` is over: its record and state go, the others see it gone and
 * drop their subscriptions. A stream whose record and state were gone already was announced by
 * whoever took them: an instance frozen past its lifetime hears Janus drop its handles after the
 * survivors swept its participants, and must not show the others a participant that left.
 */
export async function endStream(parts: MediaParts, session: Session, hub: RoomHub, type: MediaSessionType): Promise<void> {
  const own = session.participant.id;
  const deleted = await Promise.all([parts.store.deletePublisher(hub.roomId, own, type), parts.store.deleteSessionState(hub.roomId, own, type)]);
  if (!deleted.includes(true)) return;
  await announceStreamEnded(hub, own, type);
  await publishUpdate(parts, session, hub);
}

/** Tells every instance that a stream ended: each detaches its subscriptions to it. */
export function announceStreamEnded(hub: RoomHub, source: string, type: MediaSessionType): Promise<void> {
  return hub.publish({ namespace: NAMESPACE, payload: { message: STREAM_ENDED, source, media_session_type: type }, audience: { to: 'room' } });
}
