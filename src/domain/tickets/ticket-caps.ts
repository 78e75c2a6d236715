/**
 * Caps on the signaling tickets issued (issue 22; `[signaling_caps]`): per registered user, per
 * invite code (all its guests together) and per source address, in windows of
 * `tickets_window_seconds`. Over a cap a start answers 429 `too_many_tickets` with `Retry-After`
 * (until the window ends). Call-in gateways are exempt: one gateway's address carries every phone
 * caller, and its service token is a trusted credential.
 */
import type { Config } from '../../config/schema.js';
import { errors } from '../../errors.js';
import type { ParticipantIdentity } from './signaling-store.js';
import { cappedKeys } from '../caps/capped-keys.js';
import type { WindowCounter } from '../caps/window-counter.js';

export interface TicketCaps {
  /** Counts a ticket for `who` from `source`, or throws 429 `too_many_tickets` when a cap is reached. */
  take(who: ParticipantIdentity, source: string): Promise<void>;
}

export function createTicketCaps(caps: Config['signaling_caps'], counter: WindowCounter): TicketCaps {
  const limits = { perUser: caps.tickets_per_user, perInviteCode: caps.tickets_per_invite_code, perSource: caps.tickets_per_source };
  return {
    async take(who, source) {
      const keys = cappedKeys('tickets', who, source, limits);
      if (keys.length === 0) return;
      const taken = await counter.take(keys, caps.tickets_window_seconds * 1000);
      if (!taken.taken) throw errors.tooManyTickets(Math.max(1, Math.ceil(taken.retryAfterMs / 1000)));
    },
  };
}
