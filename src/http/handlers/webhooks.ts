import type { OperationsByTag } from '../../../generated/operations.js';
import { callerUser } from '../auth.js';
import type { Handlers } from '../handler-types.js';
import { pageAnswer, pageQuery } from '../pagination.js';
import type { Services } from './services.js';

export function webhooksHandlers({ webhookSubscriptions: subscriptions, publicUrl }: Services) {
  return {
    async get_webhook_subscriptions({ caller, query, req }) {
      const page = pageQuery(query);
      return pageAnswer(req, publicUrl, query, page, await subscriptions.list(callerUser(caller).id, page));
    },

    async create_webhook_subscription({ caller, body }) {
      return { status: 201, body: await subscriptions.create(callerUser(caller).id, body) };
    },

    async get_webhook_subscription({ caller, params }) {
      return { status: 200, body: await subscriptions.get(callerUser(caller).id, params.subscription_id) };
    },

    async delete_webhook_subscription({ caller, params }) {
      await subscriptions.remove(callerUser(caller).id, params.subscription_id);
      return { status: 204 };
    },

    async resume_webhook_subscription({ caller, params }) {
      return { status: 200, body: await subscriptions.resume(callerUser(caller).id, params.subscription_id) };
    },

    async get_webhook_deliveries({ caller, params, query, req }) {
      const page = pageQuery(query);
      return pageAnswer(req, publicUrl, query, page, await subscriptions.deliveries(callerUser(caller).id, params.subscription_id, page));
    },
  } satisfies Handlers<OperationsByTag['webhooks']>;
}
