/**
 * The types of the typed signaling client, derived from the maps that `npm run generate` writes from
 * spec/asyncapi.yaml (`CommandsByNamespace`, `EventsByNamespace`): a namespace, action or message
 * added to the contract is typed here without a change, and one removed stops compiling where used.
 */
import type { CommandsByNamespace, EventsByNamespace, ServerEvent } from '../generated/signaling/types.js';

export type { CommandsByNamespace, EventsByNamespace, ServerEvent };

type PayloadOf<Frame> = Frame extends { payload: infer Payload } ? Payload : never;

/** A namespace the client may send commands to. */
export type CommandNamespace = Extract<keyof CommandsByNamespace, string>;
/** The payloads of a namespace's commands: a union tagged by `action` (free-form in `echo`). */
export type CommandPayload<N extends CommandNamespace> = PayloadOf<CommandsByNamespace[N][keyof CommandsByNamespace[N]]>;

/** A namespace the server sends events in. */
export type EventNamespace = Extract<keyof EventsByNamespace, string>;
/** A message of the namespace, or `'*'` for every message of it (echo replies are only `'*'`). */
export type EventMessage<N extends EventNamespace> = (keyof EventsByNamespace[N] & string) | '*';
/** The whole frame (`{namespace, timestamp, payload}`) of a message; of any message of N for `'*'`. */
export type EventFrame<N extends EventNamespace, M extends EventMessage<N>> = M extends keyof EventsByNamespace[N]
  ? EventsByNamespace[N][M]
  : EventsByNamespace[N][keyof EventsByNamespace[N]];

/** The answer to `join`: in the room, waiting to be let in, or refused for now (the room is full). */
export type JoinResult =
  | { result: 'join_success'; frame: EventsByNamespace['control']['join_success'] }
  | { result: 'in_waiting_room'; frame: EventsByNamespace['moderation']['in_waiting_room'] }
  | { result: 'join_blocked'; frame: EventsByNamespace['control']['join_blocked'] };

/** How the socket closed: the close frame's code and reason (1006 when there was none). */
export interface SignalingClose {
  code: number;
  reason: string;
  wasClean: boolean;
}

/** Waiting for an event: give up after `timeoutMs` or when `signal` aborts (neither: until the socket closes). */
export interface WaitOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * What the client needs of a WebSocket: the browser's and Node's global one and the `ws` package's
 * all fit. Only text frames are sent; received binary frames are read as UTF-8.
 */
export interface WebSocketLike {
  readonly readyState: number;
  readonly protocol: string;
  binaryType: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the DOM's and ws's event types differ; each listener here types what it reads
  addEventListener(type: 'open' | 'message' | 'error' | 'close', listener: (event: any) => void): void;
}

export type WebSocketConstructor = new (url: string, protocols: string[]) => WebSocketLike;

/** Checks one received frame against the contract; throws when it breaks it. */
export type FrameCheck = (frame: unknown) => void;

/**
 * Reconnecting after a drop (`startSignaling({ reconnect })`). Before attempt n the client waits
 * between half and all of `min(maxDelayMs, initialDelayMs × 2^(n−1))` (the random part keeps many
 * clients dropped at once from coming back at once). The defaults give up after about a minute,
 * within the 120 s a dropped session's resumption token stays good.
 */
export interface ReconnectOptions {
  /** Attempts after one drop before giving up; default 10. */
  maxAttempts?: number;
  /** The wait before the first attempt; default 250 ms. */
  initialDelayMs?: number;
  /** The longest wait between two attempts; default 10 000 ms. */
  maxDelayMs?: number;
  /** How long an attempt waits for the answer to its `join`; default 10 000 ms. */
  joinTimeoutMs?: number;
}

/**
 * Why a connection ended for good: the caller's `close()`, a frame that broke the protocol, a close
 * that is not reconnected (reconnect off, or a code that ends the session: 1000 after a kick, ban,
 * the room's end or a takeover, 1007, 1009 …), or reconnecting gave up (`error` says why).
 */
export type DisconnectReason = 'closed_by_client' | 'protocol_failure' | 'socket_closed' | 'reconnect_failed';

/** What happens to the connection itself, in order: see `SignalingConnection.onConnectionEvent`. */
export type ConnectionEvent =
  | {
      type: 'reconnecting';
      /** 1 for the first attempt after a drop. */
      attempt: number;
      /** The wait before this attempt. */
      delayMs: number;
      /** The drop (for attempt 1), else the failure of the attempt before. */
      cause: SignalingClose | Error;
    }
  | {
      type: 'reconnected';
      attempt: number;
      /** The answer to the repeated `join` (none when the caller had not joined before the drop). */
      join: JoinResult | undefined;
      /**
       * `join_success` came with the participant id of before the drop. False when the server started
       * a new participant: it ignores a resumption token that expired (120 s after the drop) or whose
       * socket never opened.
       */
      resumed: boolean;
    }
  | {
      type: 'disconnected';
      reason: DisconnectReason;
      /** How the last socket that was open closed. */
      close: SignalingClose;
      /** With `reconnect_failed`: the last attempt's failure. */
      error?: Error;
    };
