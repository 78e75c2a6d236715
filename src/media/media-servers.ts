/**
 * The media servers as the media module sees them (src/signaling/modules/media/): the Janus servers
 * of `[media] janus_urls`, each reached through this instance's one Janus session on it
 * (janus-servers.ts builds them on src/media/janus/). The module names a server by its URL, which
 * is also what the room's pin in the media store holds, so every instance finds the same server.
 */

/** A candidate as Janus trickles it and takes it: no `sdpMid` (the reference drops it, so does Convene). */
export interface IceCandidate {
  sdpMLineIndex: number;
  candidate: string;
}

/** What happens to a handle, as its listener hears it. `lost`: its server went away (every handle on it hears this); the handle is dead, with nothing left to detach. */
export type MediaHandleEvent =
  | { type: 'webrtcup' }
  | { type: 'media'; kind: 'audio' | 'video'; receiving: boolean }
  | { type: 'slowlink'; uplink: boolean }
  | { type: 'trickle'; candidate: IceCandidate | { completed: true } }
  | { type: 'hangup' }
  | { type: 'detached' }
  | { type: 'lost' };

export interface Jsep {
  type: 'offer' | 'answer';
  sdp: string;
}

/** A videoroom request's answer: the plugin's data, and the SDP Janus sent with it. */
export interface PluginAnswer {
  data: Record<string, unknown>;
  jsep?: Jsep;
}

/** One attached videoroom handle: a publisher's or a subscriber's. */
export interface MediaHandle {
  /** A videoroom request on this handle; rejects with the plugin's or Janus's error, or when the server does not answer. */
  request(body: Record<string, unknown>, jsep?: Jsep): Promise<PluginAnswer>;
  trickle(candidate: IceCandidate | { completed: true }): Promise<void>;
  /** Detaches the handle (Janus hangs up its PeerConnection); a handle already gone is no error. */
  detach(): Promise<void>;
}

/** Whether a server (or the media service as a whole) can be used now; `not_configured` when there is none. */
export type MediaStatus = 'up' | 'down' | 'not_configured';

export interface MediaServers {
  /** The configured servers that are up now, the least busy (fewest handles from this instance) first. */
  available(): string[];
  isUp(server: string): boolean;
  /** Attaches a videoroom handle on the server; `listener` hears its events until it is detached or lost. */
  attach(server: string, listener: (event: MediaHandleEvent) => void): Promise<MediaHandle>;
  /** A videoroom request about rooms (create, destroy, kick, list) through this instance's service handle on the server. */
  roomRequest(server: string, body: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** `up` while at least one server is up. */
  status(): MediaStatus;
  close(): Promise<void>;
}
