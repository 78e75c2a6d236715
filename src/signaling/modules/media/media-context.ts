/**
 * What the media module's parts share: its dependencies, its store, this instance's handles, and
 * the way each sends an event or an error to a participant.
 */
import type { MediaErrorEvent } from '../../../../generated/signaling/types.js';
import type { Config } from '../../../config/schema.js';
import type { MediaServers } from '../../../media/media-servers.js';
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import type { ControlModule, ModuleDeps } from '../module.js';
import type { LocalHandles } from './local-handles.js';
import type { MediaSessionType, MediaStore } from './media-store.js';
import type { PresenterRule } from './presenters.js';

export const NAMESPACE = 'media';

export interface MediaParts {
  deps: ModuleDeps;
  config: Config['media'];
  servers: MediaServers;
  store: MediaStore;
  handles: LocalHandles;
  presenters: PresenterRule;
  control: () => ControlModule;
}

/** The codes of the media `error` event; two of them (`invalid_request_offer`, `invalid_configure_request`) name the stream they are about. */
export type MediaError = MediaErrorEvent['payload']['error'];

export interface StreamRef {
  source: string;
  media_session_type: MediaSessionType;
}

export function fail(session: Pick<Session, 'send'>, error: MediaError, stream?: StreamRef): void {
  session.send(NAMESPACE, { message: 'error', error, ...stream });
}

export function send(session: Pick<Session, 'send'>, message: string, fields: Record<string, unknown> = {}): void {
  session.send(NAMESPACE, { message, ...fields });
}

/** The others see the participant's media as it is now (`control` `update`). */
export function publishUpdate(parts: MediaParts, session: Session, hub: RoomHub): Promise<void> {
  return parts.control().publishUpdate(session, hub);
}

/** Moderators may always share a screen; others when they are presenters. */
export async function mayShareScreen(parts: MediaParts, session: Session): Promise<boolean> {
  if (session.role === 'moderator') return true;
  return (await parts.presenters.presenters(session.room.roomId, [session.participant.id])).has(session.participant.id);
}
