/**
 * While a participant enters the room or its waiting room, events may already reach it: it is
 * `joined` (or `waiting`) before the step is done, so that nothing sent meanwhile is missed (the
 * `joined` of someone entering at the same moment on any instance, between the read of the member
 * list and the first delivery; a moderator's quick `accepted`). Yet the step's own answer must come
 * first (`join_success`, which clients require as their first frame; `in_waiting_room`). So what the
 * session is sent meanwhile is held, and sent after that answer, in order.
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
