/**
 * The failures the signaling client reports, one class each so callers can tell them apart with
 * `instanceof`: the room's start refused, the opening refused, the socket closed while waiting, a wait timed out, the server
 * broke the protocol, or answered a command with an `error` event.
 */
import type { ServerEvent } from '../generated/signaling/types.js';
import type { SignalingClose } from './signaling-types.js';

/** The start operation (`start`, `start_invited`) answered an error instead of a ticket. */
export class SignalingStartError extends Error {
  override readonly name = 'SignalingStartError';
  constructor(
    readonly status: number,
    /** The error body (`{code, message, documentation_url, status}`). */
    readonly body: unknown,
  ) {
    const code = (body as { code?: unknown } | undefined)?.code;
    super(`the room's start answered ${status}${typeof code === 'string' ? ` ${code}` : ''}`);
  }

  /** The error body's `code` (`wrong_room_password`, `session_running` …). */
  get code(): string | undefined {
    const code = (this.body as { code?: unknown } | undefined)?.code;
    return typeof code === 'string' ? code : undefined;
  }
}

/**
 * The server refused the opening. It answers a missing, used, expired or foreign ticket (401) and an
 * unknown protocol (400) as plain HTTP before the upgrade; a browser's WebSocket (and Node's global
 * one) cannot read that answer, so `status` and `body` are only known with the `ws` package.
 */
export class SignalingConnectError extends Error {
  override readonly name = 'SignalingConnectError';
  constructor(
    message: string,
    readonly status?: number,
    /** The refusal's error body (`{code, message, documentation_url, status}`), when it could be read. */
    readonly body?: unknown,
  ) {
    super(message);
  }

  /** The error body's `code` (`invalid_ticket`, `missing_protocol` …), when the body could be read. */
  get code(): string | undefined {
    const body = this.body as { code?: unknown } | undefined;
    return typeof body?.code === 'string' ? body.code : undefined;
  }
}

/** The socket closed before the awaited event came, or a command was sent on a socket that is not open. */
export class SignalingClosedError extends Error {
  override readonly name = 'SignalingClosedError';
  constructor(
    message: string,
    readonly close?: SignalingClose,
  ) {
    super(message);
  }
}

/** An awaited event did not come within the time given. */
export class SignalingTimeoutError extends Error {
  override readonly name = 'SignalingTimeoutError';
}

/**
 * The server sent a frame that is no JSON or (with `validate`) breaks the contract. The client
 * trusts nothing after it: it closes the socket with 1002, and every wait fails with this error.
 */
export class SignalingProtocolError extends Error {
  override readonly name = 'SignalingProtocolError';
  constructor(
    message: string,
    /** The frame as received (the text, when it was no JSON). */
    readonly frame: unknown,
  ) {
    super(message);
  }
}

/** The server answered a command with an `error` event (e.g. `join` with `invalid_username`). */
export class SignalingCommandError extends Error {
  override readonly name = 'SignalingCommandError';
  constructor(readonly frame: Extract<ServerEvent, { payload: { message: 'error' } }>) {
    super(`${frame.namespace} error: ${frame.payload.error}`);
  }

  /** The error code, e.g. `invalid_username`. */
  get error(): string {
    return this.frame.payload.error;
  }
}
