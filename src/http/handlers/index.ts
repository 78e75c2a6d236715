/**
 * Every operation of the contract mapped to its handler. The annotation makes a missing handler a
 * compile error: an operation added to the spec fails `tsc` until it is handled here.
 */
import type { OperationId } from '../../../generated/operations.js';
import type { Handlers } from '../handler-types.js';
import { assetsHandlers } from './assets.js';
import { authHandlers } from './auth.js';
import { calendarFeedHandlers } from './calendar_feed.js';
import { eventInvitesHandlers } from './event_invites.js';
import { eventsHandlers } from './events.js';
import { healthHandlers } from './health.js';
import { invitesHandlers } from './invites.js';
import { notYetImplementedHandlers } from './not-yet.js';
import { roomsHandlers } from './rooms.js';
import type { Services } from './services.js';
import { signalingHandlers } from './signaling.js';
import { sipHandlers } from './sip.js';
import { streamingTargetsHandlers } from './streaming_targets.js';
import { turnHandlers } from './turn.js';
import { usersHandlers } from './users.js';
import { webhooksHandlers } from './webhooks.js';

export type { Services } from './services.js';

export function createHandlers(services: Services): Handlers<OperationId> {
  return {
    // first, so that a built handler replaces its 501 while an issue is in progress
    ...notYetImplementedHandlers,
    ...authHandlers(services),
    ...usersHandlers(services),
    ...healthHandlers(services),
    ...eventInvitesHandlers(services),
    ...roomsHandlers(services),
    ...sipHandlers(services),
    ...streamingTargetsHandlers(services),
    ...assetsHandlers(services),
    ...invitesHandlers(services),
    ...turnHandlers(services),
    ...signalingHandlers(services),
    ...eventsHandlers(services),
    ...calendarFeedHandlers(services),
    ...webhooksHandlers(services),
  };
}
