/**
 * The signaling start operations: each answers a ticket for `/signaling` and a resumption token.
 * The rules live in `domain/tickets/start.service.ts`; here the caller and source address are read.
 */
import type { Request } from 'express';
import type { OperationsByTag } from '../../../generated/operations.js';
import { callerUser, presentedUser } from '../auth.js';
import { errors } from '../../errors.js';
import type { Handlers } from '../handler-types.js';
import type { Services } from './services.js';

/** The client's address as Express sees it (`[http] trust_proxy` decides whether X-Forwarded-For counts). */
const sourceOf = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? 'unknown';

export function signalingHandlers({ start, identity, users }: Services) {
  return {
    async start_room({ caller, params, body, req }) {
      const user = callerUser(caller);
      return { status: 200, body: await start.startAsUser(user.id, params.room_id, body ?? {}, sourceOf(req)) };
    },

    async start_invited_room({ params, body, req }) {
      const user = await presentedUser(req.get('authorization'), { identity, users });
      return { status: 200, body: await start.startAsGuest(params.room_id, body, sourceOf(req), user?.id) };
    },

    async start_call_in({ caller, body }) {
      // the contract's ServiceToken scheme already verified the token and its call-in role; the
      // gateway's address is every caller's, so the pins are counted per call-in id, not per source
      if (caller.kind !== 'service') throw errors.unauthorized();
      return { status: 200, body: await start.startCallIn(body) };
    },
  } satisfies Handlers<OperationsByTag['signaling']>;
}
