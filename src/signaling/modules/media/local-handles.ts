/**
 * This instance's Janus handles, by the session they serve: one per stream the participant
 * publishes (`video`, `screen`) and one per stream it receives (another participant's `video` or
 * `screen`). A handle lives where its participant's socket is, since its events are that
 * participant's; the media store tells the other instances what they need (feed ids, the room's
 * server).
 */
import type { IceCandidate, MediaHandle } from '../../../media/media-servers.js';
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import type { MediaSessionType } from './media-store.js';

export type HandleRole = 'publisher' | 'subscriber';

export interface LocalHandle {
  readonly session: Session;
  readonly hub: RoomHub;
  readonly role: HandleRole;
  readonly type: MediaSessionType;
  /** Whose stream: the session's own id for a publisher, the publisher's for a subscriber. */
  readonly source: string;
  readonly server: string;
  /** Set once Janus attached it. */
  handle?: MediaHandle;
  /**
   * Whether the SDP this handle's candidates belong to has reached the participant. Until then
   * Janus's trickled candidates wait here: the browser refuses a candidate before its remote
   * description.
   */
  sdpSent: boolean;
  readonly held: Array<IceCandidate | { completed: true }>;
}

const keyOf = (role: HandleRole, source: string, type: MediaSessionType) => `${role}:${source}:${type}`;

export class LocalHandles {
  private readonly bySession = new Map<Session, Map<string, LocalHandle>>();

  get(session: Session, role: HandleRole, source: string, type: MediaSessionType): LocalHandle | undefined {
    return this.bySession.get(session)?.get(keyOf(role, source, type));
  }

  /** Registers a handle being made; the one it replaces (if any) must have been removed first. */
  add(fields: Omit<LocalHandle, 'sdpSent' | 'held'>): LocalHandle {
    const local: LocalHandle = { ...fields, sdpSent: false, held: [] };
    let handles = this.bySession.get(local.session);
    if (!handles) this.bySession.set(local.session, (handles = new Map<string, LocalHandle>()));
    handles.set(keyOf(local.role, local.source, local.type), local);
    return local;
  }

  isRegistered(local: LocalHandle): boolean {
    return this.get(local.session, local.role, local.source, local.type) === local;
  }

  /** Forgets the handle; false when it was gone already (so that exactly one caller releases it). */
  remove(local: LocalHandle): boolean {
    if (!this.isRegistered(local)) return false;
    const handles = this.bySession.get(local.session)!;
    handles.delete(keyOf(local.role, local.source, local.type));
    if (handles.size === 0) this.bySession.delete(local.session);
    return true;
  }

  ofSession(session: Session): LocalHandle[] {
    return [...(this.bySession.get(session)?.values() ?? [])];
  }

  /** This instance's subscribers to a stream in a room. */
  subscribersTo(roomId: string, source: string, type: MediaSessionType): LocalHandle[] {
    return this.all().filter((local) => local.role === 'subscriber' && local.source === source && local.type === type && local.hub.roomId === roomId);
  }

  private all(): LocalHandle[] {
    return [...this.bySession.values()].flatMap((handles) => [...handles.values()]);
  }
}
