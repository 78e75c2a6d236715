/**
 * While a participant enters the room, room events may already reach it: it is `joined` before its
 * place is taken, so that nobody who enters at the same moment (on any instance) is missed between
 * the read of the member list and the first delivery. Yet its first frame must be `join_success`
 * (clients require that). So what the session is sent meanwhile is held, and sent after
 * `join_success`, in order.
 */
import type { EventPayload, Session } from '../../session.js';

export interface HeldSends {
  /** Sends `first`, then everything held but what `skip` drops, and stops holding. */
  release(first: { namespace: string; payload: EventPayload }, skip?: (namespace: string, payload: EventPayload) => boolean): void;
  /** Stops holding; what was held is dropped (the participant did not enter after all). */
  drop(): void;
}

export function holdSends(session: Session): HeldSends {
  const held: Array<[string, EventPayload]> = [];
  const send = session.send;
  session.send = (namespace, payload) => void held.push([namespace, payload]);
  return {
    release(first, skip) {
      session.send = send;
      session.send(first.namespace, first.payload);
      for (const [namespace, payload] of held.splice(0)) if (!skip?.(namespace, payload)) session.send(namespace, payload);
    },
    drop() {
      session.send = send;
      held.length = 0;
    },
  };
}
