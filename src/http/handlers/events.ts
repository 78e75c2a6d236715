/**
 * The `events` tag: events, their occurrences and favorites (issue 5). The HTTP edge only: the
 * contract's parameters in, `events.service.ts` does the work, cursor links out.
 */
import type { Request } from 'express';
import type { OperationsByTag } from '../../../generated/operations.js';
import { callerUser } from '../auth.js';
import { errors } from '../../errors.js';
import type { Handlers } from '../handler-types.js';
import { linkHeader, linkTo, type DeclaredQuery } from '../pagination.js';
import type { Services } from './services.js';

export function eventsHandlers({ events, publicUrl }: Services) {
  /** `Link: <this request with after=CURSOR>; rel="after"` while another page follows (docs/architecture.md §4). */
  const afterLink = (req: Request, query: DeclaredQuery, next: string | undefined) => {
    if (next === undefined) return {};
    // the instances' synonym `cursor`: the link names the cursor once, as `after`
    const { cursor: _synonym, ...rest } = query;
    return linkHeader(`<${linkTo(req, publicUrl, rest, { after: next })}>; rel="after"`);
  };

  return {
    async get_events({ caller, query, req }) {
      const page = await events.list(callerUser(caller), query);
      return { status: 200, body: page.items, headers: afterLink(req, query, page.next) };
    },

    async create_event({ caller, query, body }) {
      const event = await events.create(callerUser(caller), body, { suppressEmail: query.suppress_email_notification === true });
      return { status: 201, body: event };
    },

    async get_event({ caller, params, query }) {
      return { status: 200, body: await events.get(callerUser(caller), params.event_id, query.invitees_max ?? 0) };
    },

    async patch_event({ caller, params, query, body }) {
      const event = await events.patch(callerUser(caller), params.event_id, body, {
        inviteesMax: query.invitees_max ?? 0,
        suppressEmail: query.suppress_email_notification === true,
      });
      return { status: 200, body: event };
    },

    async delete_event({ caller, params, query }) {
      await events.remove(callerUser(caller), params.event_id, { suppressEmail: query.suppress_email_notification === true });
      return { status: 204 };
    },

    async get_event_instances({ caller, params, query, req }) {
      // `cursor` is the interface's name, `after` the reference clients'; both at once must agree
      if (query.cursor !== undefined && query.after !== undefined && query.cursor !== query.after) {
        throw errors.validationFailed([{ field: 'after', code: 'invalid_value', message: 'cursor and after name different positions' }]);
      }
      const page = await events.instances(callerUser(caller), params.event_id, {
        ...query,
        cursor: query.cursor ?? query.after,
        cursorParam: query.cursor !== undefined ? 'cursor' : 'after',
      });
      return { status: 200, body: page.items, headers: afterLink(req, query, page.next) };
    },

    async get_event_instance({ caller, params, query }) {
      const instance = await events.instance(callerUser(caller), params.event_id, params.instance_id, query.invitees_max ?? 0);
      return { status: 200, body: instance };
    },

    async patch_event_instance({ caller, params, query, body }) {
      const instance = await events.patchInstance(callerUser(caller), params.event_id, params.instance_id, body, query.invitees_max ?? 0);
      return { status: 200, body: instance };
    },

    async add_event_to_favorites({ caller, params }) {
      const added = await events.addFavorite(callerUser(caller), params.event_id);
      return { status: added ? 201 : 204 };
    },

    async remove_event_from_favorites({ caller, params }) {
      await events.removeFavorite(callerUser(caller), params.event_id);
      return { status: 204 };
    },
  } satisfies Handlers<OperationsByTag['events']>;
}
