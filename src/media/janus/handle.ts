/**
 * A handle: one attachment of the videoroom plugin in the connection's session (one per publisher
 * or subscriber), its requests and the events Janus sends it unasked.
 */

/** An SDP offer or answer as Janus takes and gives it. */
export interface Jsep {
  type: 'offer' | 'answer';
  sdp: string;
  [field: string]: unknown;
}

/** One ICE candidate as the browser gives it (RTCIceCandidateInit), or the end of them. */
export type TrickleCandidate = { candidate: string; sdpMid?: string | null; sdpMLineIndex?: number | null } | { completed: true };

/** A message of the Janus WebSocket API, as far as this client reads it. */
export interface JanusMessage {
  janus: string;
  transaction?: string;
  session_id?: number;
  /** The handle an event concerns. */
  sender?: number;
  data?: { id?: number };
  plugindata?: { plugin: string; data: Record<string, unknown> };
  jsep?: Jsep;
  error?: { code: number; reason: string };
  [field: string]: unknown;
}

/** A plugin's answer to a request: its `plugindata.data` and, for offers and answers, the SDP. */
export interface PluginReply {
  data: Record<string, unknown>;
  jsep?: Jsep;
}

/**
 * What Janus tells a handle unasked. `detached` and `lost` end a handle, and nothing comes after
 * either: `detached`, Janus dropped it (also when it drops the whole session, which it may report
 * before `timeout`); `lost`, the connection or its session went down, so the handle is dead in Janus. `plugin`: a plugin event that answers no request
 * (videoroom `destroyed`, `updated`, `event` with `leaving`/`kicked`, …).
 */
export type JanusHandleEvent =
  | { type: 'webrtcup' }
  | { type: 'media'; kind: string; receiving: boolean; mid?: string }
  | { type: 'slowlink'; uplink: boolean; mid?: string; lost?: number }
  | { type: 'hangup'; reason?: string }
  | { type: 'detached' }
  | { type: 'trickle'; candidate: TrickleCandidate }
  | { type: 'plugin'; data: Record<string, unknown>; jsep?: Jsep }
  | { type: 'lost'; reason: string };

export type JanusHandleListener = (event: JanusHandleEvent) => void;

/** How a handle reaches Janus: its connection. `ackEnds`: Janus's `ack` is the whole answer. */
export interface HandleTransport {
  request(message: Omit<JanusMessage, 'transaction' | 'session_id'>, ackEnds: boolean): Promise<JanusMessage>;
  forget(handleId: number): void;
}

export class JanusHandle {
  constructor(
    readonly id: number,
    private readonly transport: HandleTransport,
    readonly listener: JanusHandleListener,
  ) {}

  /**
   * A plugin request (`body.request`: create, exists, list, join, configure, start, kick, destroy,
   * …). Synchronous requests are answered by `success`, asynchronous ones by `ack` and then an
   * `event`: either resolves with the plugin's data; a plugin's `error_code` rejects (JanusError).
   */
  async request(body: Record<string, unknown>, jsep?: Jsep): Promise<PluginReply> {
    const reply = await this.transport.request({ janus: 'message', handle_id: this.id, body, ...(jsep && { jsep }) }, false);
    return { data: reply.plugindata?.data ?? {}, ...(reply.jsep && { jsep: reply.jsep }) };
  }

  /** Hands Janus one of the browser's ICE candidates, or `{ completed: true }` after the last. */
  async trickle(candidate: TrickleCandidate): Promise<void> {
    await this.transport.request({ janus: 'trickle', handle_id: this.id, candidate }, true);
  }

  /**
   * Detaches the handle (Janus hangs up its PeerConnection). Its listener may get `hangup` and
   * `detached` before this resolves, and gets nothing after: Janus sends `detached` sometimes before
   * its answer, sometimes after.
   */
  async detach(): Promise<void> {
    try {
      await this.transport.request({ janus: 'detach', handle_id: this.id }, false);
    } finally {
      this.transport.forget(this.id);
    }
  }
}

/** The handle event an unasked Janus message carries, or undefined for one this client does not pass on. */
export function handleEvent(message: JanusMessage): JanusHandleEvent | undefined {
  switch (message.janus) {
    case 'webrtcup':
      return { type: 'webrtcup' };
    case 'media':
      return { type: 'media', kind: String(message.type), receiving: message.receiving === true, ...optionalMid(message) };
    case 'slowlink':
      return { type: 'slowlink', uplink: message.uplink === true, ...optionalMid(message), ...(typeof message.lost === 'number' && { lost: message.lost }) };
    case 'hangup':
      return { type: 'hangup', ...(typeof message.reason === 'string' && { reason: message.reason }) };
    case 'detached':
      return { type: 'detached' };
    case 'trickle':
      return { type: 'trickle', candidate: message.candidate as TrickleCandidate };
    case 'event':
      return message.plugindata ? { type: 'plugin', data: message.plugindata.data, ...(message.jsep && { jsep: message.jsep }) } : undefined;
    default:
      return undefined;
  }
}

const optionalMid = (message: JanusMessage) => (typeof message.mid === 'string' ? { mid: message.mid } : {});
