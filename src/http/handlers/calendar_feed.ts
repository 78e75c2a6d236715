/**
 * The `calendar_feed` tag (issue 20): the caller's feed URL (issue/rotate, look, revoke), and the
 * feed itself, read by calendar programs with the secret in its path and no other credential.
 */
import type { OperationsByTag } from '../../../generated/operations.js';
import { matchesEtag } from '../../domain/calendar-feed/calendar-feed.service.js';
import { callerUser } from '../auth.js';
import { errors } from '../../errors.js';
import type { Handlers } from '../handler-types.js';
import { linkOrigin } from '../pagination.js';
import type { Services } from './services.js';

/** A subscriber may keep the feed and revalidate it (ETag); no shared cache keeps it, as its URL is a secret. */
const CACHE_CONTROL = 'private, no-cache';

export function calendarFeedHandlers({ calendarFeeds: feeds, publicUrl }: Services) {
  return {
    async get_calendar_feed({ caller }) {
      const { createdAt } = await feeds.get(callerUser(caller).id);
      return { status: 200, body: { created_at: createdAt.toISOString() } };
    },

    async issue_calendar_feed({ caller, req }) {
      // the URL is absolute: on [http] public_url, else on the request's own scheme and Host
      const origin = linkOrigin(req, publicUrl);
      if (!origin) throw errors.invalidHost();
      const { token, createdAt } = await feeds.issue(callerUser(caller).id);
      const url = `${origin}/v1/calendar_feeds/${token}/meetings.ics`;
      return { status: 201, body: { created_at: createdAt.toISOString(), url, webcal_url: url.replace(/^https?:/, 'webcal:') } };
    },

    async revoke_calendar_feed({ caller }) {
      await feeds.revoke(callerUser(caller).id);
      return { status: 204 };
    },

    async get_calendar_feed_ics({ params, req }) {
      const { text, etag } = await feeds.render(params.token);
      const headers = { etag, 'cache-control': CACHE_CONTROL, 'x-robots-tag': 'noindex' };
      if (matchesEtag(req.get('if-none-match'), etag)) return { status: 304, headers };
      return { status: 200, stream: Buffer.from(text, 'utf8'), contentType: 'text/calendar; charset=utf-8', headers };
    },
  } satisfies Handlers<OperationsByTag['calendar_feed']>;
}
