import type { OperationsByTag } from '../../../generated/operations.js';
import { callerUser } from '../auth.js';
import type { Handlers } from '../handler-types.js';
import { linkHeader, pageLinks, requestUrl } from '../pagination.js';
import type { Services } from './services.js';

export function usersHandlers({ users, config }: Services) {
  return {
    async get_users({ caller, query, req }) {
      const page = { page: query.page ?? 1, per_page: query.per_page ?? 30 };
      const result = await users.listVisibleUsers(callerUser(caller), page);
      const link = pageLinks(requestUrl(req, config.http.public_url), page, result.total);
      return { status: 200, body: result.items, headers: linkHeader(link) };
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
