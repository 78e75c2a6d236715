/**
 * What moderators do to others' media: ask them to mute (`request_mute`: the client mutes itself,
 * Janus is not touched), force mute (microphones outside the allow list are switched off in the
 * store and on the Janus publishers, and may not be switched on again until it ends), and the
 * presenter role (who may share a screen). A change to a participant is carried out by the
 * instance its socket is on, in its session's order, when the room message reaches that instance
 * (`carryOut`), so that Convene, not the client, enforces it.
 */
import type { MediaModeratorMuteCommand } from '../../../../generated/signaling/types.js';
import type { RoomMessage } from '../../bus/signaling-bus.js';
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import { fail, NAMESPACE, publishUpdate, send, type MediaParts } from './media-context.js';
import { endStream, release } from './stream-end.js';
import { applyState } from './streams.js';

const isModerator = (session: Session) => session.role === 'moderator';

/** `targets` absent: everyone but the issuer. */
export async function moderatorMute(parts: MediaParts, session: Session, command: MediaModeratorMuteCommand['payload'], hub: RoomHub): Promise<void> {
  if (!isModerator(session)) return fail(session, 'permission_denied');
  const own = session.participant.id;
  const payload = { message: 'request_mute', issuer: own, force: command.force };
  if (command.targets === undefined) return hub.publish({ namespace: NAMESPACE, payload, audience: { to: 'room', except: own } });
  const targets = await inRoom(
    parts,
    hub.roomId,
    (Array.isArray(command.targets) ? command.targets : [command.targets]).filter((id) => id !== own),
  );
  await Promise.all(targets.map((id) => hub.publish({ namespace: NAMESPACE, payload, audience: { to: 'participant', id } })));
}

export async function enableForceMute(parts: MediaParts, session: Session, allowList: string[], hub: RoomHub): Promise<void> {
  if (!isModerator(session)) return fail(session, 'permission_denied');
  const unique = [...new Set(allowList)];
  await parts.store.setForceMute(hub.roomId, unique);
  await hub.publish({ namespace: NAMESPACE, payload: { message: 'force_mute_enabled', allow_list: unique }, audience: { to: 'room' } });
}

export async function disableForceMute(parts: MediaParts, session: Session, hub: RoomHub): Promise<void> {
  if (!isModerator(session)) return fail(session, 'permission_denied');
  await parts.store.setForceMute(hub.roomId, undefined);
  await hub.publish({ namespace: NAMESPACE, payload: { message: 'force_mute_disabled' }, audience: { to: 'room' } });
}

export async function grantPresenter(parts: MediaParts, session: Session, ids: string[], hub: RoomHub): Promise<void> {
  if (!isModerator(session)) return fail(session, 'permission_denied');
  const granted = await parts.presenters.grant(hub.roomId, await inRoom(parts, hub.roomId, ids));
  await Promise.all(granted.map((id) => hub.publish({ namespace: NAMESPACE, payload: { message: 'presenter_granted' }, audience: { to: 'participant', id } })));
  send(session, 'presenter_role_granted', { participant_ids: granted });
}

export async function revokePresenter(parts: MediaParts, session: Session, ids: string[], hub: RoomHub): Promise<void> {
  if (!isModerator(session)) return fail(session, 'permission_denied');
  const revoked = await parts.presenters.revoke(hub.roomId, await inRoom(parts, hub.roomId, ids));
  await Promise.all(revoked.map((id) => hub.publish({ namespace: NAMESPACE, payload: { message: 'presenter_revoked' }, audience: { to: 'participant', id } })));
  send(session, 'presenter_role_revoked', { participant_ids: revoked });
}

/** The ids (unique) of participants in the room now, on any instance. */
async function inRoom(parts: MediaParts, roomId: string, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  const present = await Promise.all(unique.map(async (id) => (await parts.control().member(roomId, id)) !== undefined));
  return unique.filter((_, index) => present[index]);
}

/** The moderation messages that change a participant here, carried out in its session's order before it reads them. */
export function carryOut(parts: MediaParts, hub: RoomHub, message: RoomMessage): void {
  const { payload, audience } = message;
  if (payload.message === 'force_mute_enabled') {
    const allowed = new Set(payload.allow_list as string[]);
    for (const session of hub.sessions.values()) {
      if (session.state === 'joined' && !allowed.has(session.participant.id)) session.enqueue(() => muteForced(parts, session, hub));
    }
    return;
  }
  if (audience.to !== 'participant') return;
  const session = hub.sessions.get(audience.id);
  if (session?.state !== 'joined') return;
  if (payload.message === 'presenter_granted') session.enqueue(() => publishUpdate(parts, session, hub));
  if (payload.message === 'presenter_revoked') session.enqueue(() => presenterRevoked(parts, session, hub));
}

async function muteForced(parts: MediaParts, session: Session, hub: RoomHub): Promise<void> {
  const own = session.participant.id;
  const video = (await parts.store.sessionStates(hub.roomId, [own])).get(own)?.video;
  if (video?.audio) await applyState(parts, session, 'video', { ...video, audio: false }, hub);
}

/** A presenter no longer: a non-moderator's screen share ends (the server's doing: the client's own `unpublish` that follows is harmless). */
async function presenterRevoked(parts: MediaParts, session: Session, hub: RoomHub): Promise<void> {
  const screen = parts.handles.get(session, 'publisher', session.participant.id, 'screen');
  if (isModerator(session) || !screen) return publishUpdate(parts, session, hub);
  await release(parts, screen);
  await endStream(parts, session, hub, 'screen');
}
