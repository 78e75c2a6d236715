import type { components } from '../../../generated/openapi.js';
import type { OperationsByTag } from '../../../generated/operations.js';
import { callerUser } from '../auth.js';
import type { Handlers } from '../handler-types.js';
import { pageAnswer, pageQuery } from '../pagination.js';
import type { Services } from './services.js';
import { isUuid } from '../../domain/uuid.js';

type EventInviteCreate = components['schemas']['EventInviteCreate'];

/**
 * Which branch of the body's `oneOf` the schema took. Unknown fields are ignored, so a body with an
 * e-mail address and an `invitee` that is no uuid is an e-mail invitation (the user branch failed);
 * testing for the presence of `invitee` once took it for a user one (a 500 on the uuid column).
 */
function isUserInvite(body: EventInviteCreate): body is Extract<EventInviteCreate, { invitee: string }> {
  return 'invitee' in body && typeof body.invitee === 'string' && isUuid(body.invitee);
}

export function eventInvitesHandlers({ eventInvites: invites, publicUrl }: Services) {
  return {
    async create_event_invite({ caller, params, query, body }) {
      const target = isUserInvite(body) ? { invitee: body.invitee } : { email: body.email };
      const outcome = await invites.invite(callerUser(caller).id, params.event_id, target, {
        role: body.role ?? 'user',
        suppress: query.suppress_email_notification ?? false,
      });
      return { status: outcome === 'created' ? 201 : 204 };
    },

    async get_event_invites({ caller, params, query, req }) {
      const page = pageQuery(query);
      return pageAnswer(req, publicUrl, query, page, await invites.list(callerUser(caller).id, params.event_id, page));
    },

    async update_event_invite({ caller, params, body }) {
      await invites.changeRole(callerUser(caller).id, params.event_id, params.user_id, body.role);
      return { status: 204 };
    },

    async delete_event_invite({ caller, params, query }) {
      await invites.uninvite(callerUser(caller).id, params.event_id, params.user_id, {
        suppress: query.suppress_email_notification ?? false,
      });
      return { status: 204 };
    },

    async delete_email_event_invite({ caller, params, query, body }) {
      await invites.uninviteEmail(callerUser(caller).id, params.event_id, body.email, {
        suppress: query.suppress_email_notification ?? false,
      });
      return { status: 204 };
    },

    async accept_event_invite({ caller, params }) {
      await invites.answer(callerUser(caller).id, params.event_id, 'accepted');
      return { status: 204 };
    },

    async decline_event_invite({ caller, params }) {
      await invites.answer(callerUser(caller).id, params.event_id, 'declined');
      return { status: 204 };
    },
  } satisfies Handlers<OperationsByTag['event_invites']>;
}
