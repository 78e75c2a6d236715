/**
 * What Janus says about a handle, told to its participant: `webrtcup` → `webrtc_up`, `media` →
 * `media_status` (the web app sends `publish_complete` on the first `receiving: true`), `slowlink` →
 * `webrtc_slow`, a trickled candidate → `sdp_candidate` / `sdp_end_of_candidates` (held until the
 * SDP went out), and the handle's end (`hangup`, `detached`, or its server lost) → `webrtc_down`
 * with the handle released; a publisher's end also ends its stream for the others.
 */
import type { IceCandidate, MediaHandleEvent } from '../../../media/media-servers.js';
import { NAMESPACE, send, type MediaParts } from './media-context.js';
import type { LocalHandle } from './local-handles.js';
import { endStream } from './stream-end.js';

export function onHandleEvent(parts: MediaParts, local: LocalHandle, event: MediaHandleEvent): void {
  if (!parts.handles.isRegistered(local)) return; // released by Convene: what Janus says after is about nothing
  const stream = { source: local.source, media_session_type: local.type };
  switch (event.type) {
    case 'webrtcup':
      return send(local.session, 'webrtc_up', stream);
    case 'media':
      return send(local.session, 'media_status', { ...stream, kind: event.kind, receiving: event.receiving });
    case 'slowlink':
      return send(local.session, 'webrtc_slow', { ...stream, direction: event.uplink ? 'upstream' : 'downstream' });
    case 'trickle':
      if (local.sdpSent) forwardCandidate(local, event.candidate);
      else local.held.push(event.candidate);
      return;
    case 'hangup':
    case 'detached':
    case 'lost':
      return handleEnded(parts, local, event.type === 'hangup');
  }
}

/** The handle's SDP reached the participant: the candidates Janus trickled meanwhile follow it. */
export function sdpSent(local: LocalHandle): void {
  local.sdpSent = true;
  for (const candidate of local.held.splice(0)) forwardCandidate(local, candidate);
}

function forwardCandidate(local: LocalHandle, candidate: IceCandidate | { completed: true }): void {
  const stream = { source: local.source, media_session_type: local.type };
  if ('completed' in candidate) return send(local.session, 'sdp_end_of_candidates', stream);
  local.session.send(NAMESPACE, {
    message: 'sdp_candidate',
    ...stream,
    candidate: { sdpMLineIndex: candidate.sdpMLineIndex, candidate: candidate.candidate },
  });
}

/** Janus ended the handle's PeerConnection, or its server went away. */
function handleEnded(parts: MediaParts, local: LocalHandle, detach: boolean): void {
  if (!parts.handles.remove(local)) return;
  send(local.session, 'webrtc_down', { source: local.source, media_session_type: local.type });
  if (detach) void local.handle?.detach().catch(() => undefined);
  if (local.role === 'publisher') {
    local.session.enqueue(() => endStream(parts, local.session, local.hub, local.type));
  }
}
