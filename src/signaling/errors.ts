/**
 * Signaling's errors on the wire, in one place: every `error` event a participant is sent is built
 * here, in its namespace, with one of the codes spec/asyncapi.yaml lists for that namespace (the
 * generated types close each list). The HTTP API's codes (src/errors.ts) reach signaling only in the
 * handshake (handshake.ts); a command that fails for a reason not the participant's is answered
 * `internal_error` (connection.ts).
 */
import type {
  ChatErrorEvent,
  ControlErrorDetails,
  ControlErrorEvent,
  MediaErrorEvent,
  MediaSessionType,
  ModerationErrorEvent,
  TimerErrorEvent,
} from '../../generated/signaling/types.js';
import type { Session } from './session.js';

interface ErrorEvents {
  chat: ChatErrorEvent;
  control: ControlErrorEvent;
  media: MediaErrorEvent;
  moderation: ModerationErrorEvent;
  timer: TimerErrorEvent;
}

/** The stream a media error is about (`invalid_request_offer`, `invalid_configure_request` name it). */
export interface MediaStreamRef {
  source: string;
  media_session_type: MediaSessionType;
}

/** What an error carries besides its code: control's `details`, the stream of a media error; nothing for the others. */
type ErrorExtra<N extends keyof ErrorEvents> = N extends 'control' ? [details?: ControlErrorDetails] : N extends 'media' ? [stream?: MediaStreamRef] : [];

/** The codes of a namespace's `error` event. */
export type SignalingErrorCode<N extends keyof ErrorEvents> = ErrorEvents[N]['payload']['error'];

/** Sends the participant its namespace's `error` event: control's with its details, media's with the stream it is about. */
export function sendError<N extends keyof ErrorEvents>(
  session: Pick<Session, 'send'>,
  namespace: N,
  error: SignalingErrorCode<N>,
  ...[extra]: ErrorExtra<N>
): void {
  if (!extra) return session.send(namespace, { message: 'error', error });
  session.send(namespace, namespace === 'control' ? { message: 'error', error, details: extra } : { message: 'error', error, ...extra });
}
