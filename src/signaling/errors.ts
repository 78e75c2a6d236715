/**
 * Signaling's errors on the wire, in one place: every `error` event a participant is sent is built
 * here, in its namespace, with one of the codes spec/asyncapi.yaml lists for that namespace (the
 * generated types close each list). The HTTP API's codes (src/errors.ts) reach signaling only in the
 * handshake (handshake.ts); a command that fails for a reason not the participant's is answered
 * `internal_error` (connection.ts).
 */
import type { ChatErrorEvent, ControlErrorDetails, ControlErrorEvent, ModerationErrorEvent, TimerErrorEvent } from '../../generated/signaling/types.js';
import type { Session } from './session.js';

interface ErrorEvents {
  chat: ChatErrorEvent;
  control: ControlErrorEvent;
  moderation: ModerationErrorEvent;
  timer: TimerErrorEvent;
}

/** The codes of a namespace's `error` event. */
export type SignalingErrorCode<N extends keyof ErrorEvents> = ErrorEvents[N]['payload']['error'];

/** Sends the participant its namespace's `error` event; only control's carries details. */
export function sendError<N extends keyof ErrorEvents>(
  session: Pick<Session, 'send'>,
  namespace: N,
  error: SignalingErrorCode<N>,
  ...[details]: N extends 'control' ? [details?: ControlErrorDetails] : []
): void {
  session.send(namespace, { message: 'error', error, ...(details ? { details } : {}) });
}
