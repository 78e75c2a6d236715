import type { OperationsByTag } from '../../../generated/operations.js';
import { callerUser, presentedUser } from '../auth.js';
import type { Handlers } from '../handler-types.js';
import { pageAnswer, pageQuery } from '../pagination.js';
import type { Services } from './services.js';

export function invitesHandlers({ invites, publicUrl, identity, users }: Services) {
  return {
    async get_room_invites({ caller, params, query, req }) {
      const page = pageQuery(query);
      return pageAnswer(req, publicUrl, query, page, await invites.list(callerUser(caller), params.room_id, page));
    },

    async create_room_invite({ caller, params, body }) {
      return { status: 200, body: await invites.create(callerUser(caller), params.room_id, body.expiration) };
    },

    async get_room_invite({ caller, params }) {
      return { status: 200, body: [await invites.get(callerUser(caller), params.room_id, params.invite_code)] };
    },

    async update_room_invite({ caller, params, body }) {
      const invite = await invites.setExpiration(callerUser(caller), params.room_id, params.invite_code, body.expiration);
      return { status: 200, body: invite };
    },

    async delete_room_invite({ caller, params }) {
      return { status: 200, body: await invites.deactivate(callerUser(caller), params.room_id, params.invite_code) };
    },

    async verify_invite_code({ body, req }) {
      // req.ip honours `[http] trust_proxy`; a missing address (a closed socket) still counts, as one source
      const user = await presentedUser(req.get('authorization'), { identity, users });
      return { status: 201, body: await invites.verify(body.invite_code, req.ip ?? 'unknown', user?.id) };
    },
  } satisfies Handlers<OperationsByTag['invites']>;
}
