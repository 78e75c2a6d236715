/**
 * The media module: audio and video through Janus (docs/media.md). Convene relays the WebRTC
 * negotiation between each participant and the room's Janus room (one per Convene room, on one of
 * `[media] janus_urls`, pinned), holds one Janus handle per stream a participant publishes or
 * receives on the instance its socket is on, keeps what the others must know (who publishes what,
 * microphones and cameras on or off, presenters, force mute, speakers) in the media store, and
 * enforces the presenter role and force mute itself.
 *
 * Built only when Janus is configured; without it no tariff offers `media` and its commands are
 * answered `invalid_namespace` like any module's that is off.
 */
import type { RoomMessage } from '../../bus/signaling-bus.js';
import type { HubEvent, RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import type { Config } from '../../../config/schema.js';
import type { MediaServers } from '../../../media/media-servers.js';
import type { MediaCommand } from '../../../../generated/signaling/types.js';
import type { CommandPayload, ControlModule, ModuleDeps, SignalingModule } from '../module.js';
import { destroyJanusRoom, kickPublisher } from './janus-rooms.js';
import { LocalHandles } from './local-handles.js';
import { NAMESPACE, type MediaParts } from './media-context.js';
import type { MediaSessionType } from './media-store.js';
import { carryOut, disableForceMute, enableForceMute, grantPresenter, moderatorMute, revokePresenter } from './moderating.js';
import { presenterRule } from './presenters.js';
import { announceStreamEnded, release, STREAM_ENDED } from './stream-end.js';
import { publish, publishComplete, setSpeaking, unpublish, updateMediaSession } from './streams.js';
import { candidate, configure, endOfCandidates, resubscribe, sdpAnswer, streamEnded, subscribe } from './subscriptions.js';

export interface MediaDeps {
  servers: MediaServers;
  config: Config['media'];
}

export function createMediaModule(deps: ModuleDeps, media: MediaDeps): SignalingModule {
  const store = deps.stores.media;
  const parts: MediaParts = {
    deps,
    config: media.config,
    servers: media.servers,
    store,
    handles: new LocalHandles(),
    presenters: presenterRule(store, media.config.screen_share_requires_permission),
    control: () => deps.modules().get('control') as ControlModule,
  };
  return {
    namespace: NAMESPACE,
    handleCommand: (session, command, hub) => handleCommand(parts, session, command, hub),
    joinData: (session) => joinData(parts, session),
    peerData: (roomId, ids) => peerData(parts, roomId, ids),
    participantLeft: (session, hub, { roomEmpty }) => participantLeft(parts, session, hub, roomEmpty),
    withholds: (_session, message) => message.payload.message === STREAM_ENDED,
    onHubEvent: (event) => onHubEvent(parts, event),
  };
}

/** A command's validated payload (the connection checked it against the contract). */
type Payload<C extends MediaCommand> = C['payload'];

async function handleCommand(parts: MediaParts, session: Session, command: CommandPayload, hub: RoomHub): Promise<void> {
  const payload = command as unknown as Payload<MediaCommand>;
  switch (payload.action) {
    case 'publish':
      return publish(parts, session, payload, hub);
    case 'publish_complete':
      return publishComplete(parts, session, payload, hub);
    case 'update_media_session':
      return updateMediaSession(parts, session, payload, hub);
    case 'unpublish':
      return unpublish(parts, session, payload.media_session_type, hub);
    case 'subscribe':
      return subscribe(parts, session, payload, hub);
    case 'resubscribe':
      return resubscribe(parts, session, payload);
    case 'sdp_answer':
      return sdpAnswer(parts, session, payload);
    case 'sdp_candidate':
      return candidate(parts, session, payload);
    case 'sdp_end_of_candidates':
      return endOfCandidates(parts, session, payload);
    case 'configure':
      return configure(parts, session, payload);
    case 'moderator_mute':
      return moderatorMute(parts, session, payload, hub);
    case 'moderator_enable_force_mute':
      return enableForceMute(parts, session, payload.allow_list, hub);
    case 'moderator_disable_force_mute':
      return disableForceMute(parts, session, hub);
    case 'grant_presenter_role':
      return grantPresenter(parts, session, payload.participant_ids, hub);
    case 'revoke_presenter_role':
      return revokePresenter(parts, session, payload.participant_ids, hub);
    case 'update_speaking_state':
      return setSpeaking(parts, session, hub, payload.is_speaking);
  }
}

/** `join_success`'s `media`: one's presenter role, who speaks, and force mute. */
async function joinData(parts: MediaParts, session: Session): Promise<unknown> {
  const { roomId } = session.room;
  const own = session.participant.id;
  const [presenters, speakers, forceMute] = await Promise.all([
    parts.presenters.presenters(roomId, [own]),
    parts.store.speakers(roomId),
    parts.store.forceMute(roomId),
  ]);
  return { is_presenter: presenters.has(own), speakers, force_mute: forceMute };
}

/** Each participant's `media`: its streams' states (a stream not published is absent) and its presenter role (one store read). */
async function peerData(parts: MediaParts, roomId: string, ids: readonly string[]): Promise<ReadonlyMap<string, unknown>> {
  const peers = await parts.store.peers(roomId, ids);
  for (const peer of peers.values()) peer.is_presenter = parts.presenters.fromStoredFlag(peer.is_presenter);
  return peers;
}

/**
 * The participant left (or its instance died and a survivor sweeps it: then none of its handles is
 * here, and its publishers are kicked out of the Janus room). Its streams end for the others; the
 * last one out takes the Janus room and the room's media state with it.
 */
async function participantLeft(parts: MediaParts, session: Session, hub: RoomHub, roomEmpty: boolean): Promise<void> {
  const own = session.participant.id;
  const local = parts.handles.ofSession(session);
  await Promise.all(local.map((handle) => release(parts, handle)));
  const publishers = (await parts.store.publishers(hub.roomId)).filter((entry) => entry.participantId === own);
  const hadHandles = new Set(local.filter((handle) => handle.role === 'publisher').map((handle) => handle.type));
  for (const { type, record } of publishers) {
    if (!hadHandles.has(type)) await kickPublisher(parts, hub.roomId, record.feedId);
    await announceStreamEnded(hub, own, type);
  }
  await parts.store.forgetParticipant(hub.roomId, own);
  if (roomEmpty) {
    await destroyJanusRoom(parts, hub.roomId);
    await parts.store.forgetRoom(hub.roomId);
  }
}

function onHubEvent(parts: MediaParts, event: HubEvent): void | Promise<void> {
  if (event.type !== 'message') return;
  const { message, hub } = event;
  if (message.payload.message === STREAM_ENDED) return streamEndedHere(parts, hub, message);
  carryOut(parts, hub, message);
}

function streamEndedHere(parts: MediaParts, hub: RoomHub, message: RoomMessage): Promise<void> {
  const { source, media_session_type } = message.payload as unknown as { source: string; media_session_type: MediaSessionType };
  return streamEnded(parts, hub.roomId, source, media_session_type);
}
