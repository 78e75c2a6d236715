import type { OperationsByTag } from '../../../generated/operations.js';
import { callerUser } from '../auth.js';
import type { Handlers } from '../handler-types.js';
import { pageAnswer, pageQuery } from '../pagination.js';
import type { Services } from './services.js';

export function usersHandlers({ users, publicUrl }: Services) {
  return {
    async get_users({ caller, query, req }) {
      const page = pageQuery(query);
      return pageAnswer(req, publicUrl, query, page, await users.listVisibleUsers(callerUser(caller), page));
    },

    async get_me({ caller }) {
      return { status: 200, body: await users.toCurrentUser(callerUser(caller)) };
    },

    async patch_me({ caller, body }) {
      return { status: 200, body: await users.patchMe(callerUser(caller), body) };
    },

    async get_my_tariff({ caller }) {
      return { status: 200, body: users.tariffOf(callerUser(caller)) };
    },

    async get_user({ caller, params }) {
      return { status: 200, body: await users.getUser(callerUser(caller), params.user_id) };
    },

    async find_users({ caller, query }) {
      return { status: 200, body: await users.findUsers(callerUser(caller), query.q) };
    },
  } satisfies Handlers<OperationsByTag['users']>;
}
