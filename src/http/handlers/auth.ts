import type { OperationsByTag } from '../../../generated/operations.js';
import type { Handlers } from '../handler-types.js';
import type { Services } from './services.js';

export function authHandlers({ identity, users }: Services) {
  return {
    async login({ body }) {
      const claims = await identity.verifyIdToken(body.id_token);
      await users.login(claims);
      // Permissions are granted per room and event, not globally; the list stays empty, as in the reference.
      return { status: 200, body: { permissions: [] } };
    },

    async get_login_provider() {
      return { status: 200, body: { oidc: identity.providerInfo() } };
    },
  } satisfies Handlers<OperationsByTag['auth']>;
}
