/**
 * What the media module's parts share: its dependencies, its store, this instance's handles, and
 * the way each sends an event or an error to a participant.
 */
import type { Config } from '../../../config/schema.js';
import type { MediaServers } from '../../../media/media-servers.js';
import { sendError, type MediaStreamRef, type SignalingErrorCode } from '../../errors.js';
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import type { ControlModule, ModuleDeps } from '../module.js';
import type { LocalHandles } from './local-handles.js';
import type { MediaStore } from './media-store.js';
import type { PresenterRule } from './presenters.js';

export const NAMESPACE = 'media' as const;

export interface MediaParts {
  deps: ModuleDeps;
  config: Config['media'];
  servers: MediaServers;
  store: MediaStore;
  handles: LocalHandles;
  presenters: PresenterRule;
  control: () => ControlModule;
}

export type MediaError = SignalingErrorCode<'media'>;

/** The media `error` event (src/signaling/errors.ts builds every error); two codes name the stream they are about. */
export const fail = (session: Pick<Session, 'send'>, error: MediaError, stream?: MediaStreamRef): void => sendError(session, NAMESPACE, error, stream);

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
