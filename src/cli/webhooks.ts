/**
 * `convene webhooks`: the operator's subscriptions, which receive the events of every room and
 * meeting (users subscribe to their own through the API). The same rules as the API's: the URL is
 * checked against `[webhooks]` (https, public addresses), the secret is shown once, when added.
 */
import { parseArgs } from 'node:util';
import type { Config } from '../config/schema.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../domain/webhooks/outbox.js';
import { createWebhookSubscriptionService } from '../domain/webhooks/subscriptions.service.js';
import { DomainError } from '../errors.js';
import { withCurrentDatabase } from './database.js';
import { CliError, usageError } from './errors.js';

export const webhooksUsage = [
  'convene webhooks list [--json]',
  'convene webhooks add <url> [--event <type>]… [--description <text>]',
  'convene webhooks remove <subscription id>',
  'convene webhooks resume <subscription id>',
  'convene webhooks deliveries <subscription id> [--json]',
].join('\n  ');

const OPERATOR = null;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function webhooksCommand(config: () => Config, args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      event: { type: 'string', multiple: true, default: [] },
      description: { type: 'string' },
    },
  });
  const run = <T>(work: (service: ReturnType<typeof createWebhookSubscriptionService>) => Promise<T>) =>
    withCurrentDatabase(config(), async (database) => {
      try {
        return await work(createWebhookSubscriptionService(database.db, config().webhooks));
      } catch (err) {
        if (err instanceof DomainError) throw new CliError(err.code === 'not_found' ? 'no operator subscription with this id' : err.message);
        throw err;
      }
    });
  const id = () => {
    if (positionals.length !== 1 || !UUID.test(positionals[0]!)) throw usageError(`usage: ${webhooksUsage}`);
    return positionals[0]!;
  };

  if (action === 'list' && positionals.length === 0) {
    const { items } = await run((service) => service.list(OPERATOR, { page: 1, per_page: 1000 }));
    if (values.json) return console.log(JSON.stringify(items, null, 2));
    console.log(
      ['id\tstatus\tfailures\tevents\turl', ...items.map((s) => `${s.id}\t${s.status}\t${s.consecutive_failures}\t${s.event_types.join(',')}\t${s.url}`)].join(
        '\n',
      ),
    );
    return;
  }
  if (action === 'add' && positionals.length === 1) {
    const unknown = values.event.filter((type) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type));
    if (unknown.length > 0) throw usageError(`unknown event type(s) ${unknown.join(', ')}; the types are ${WEBHOOK_EVENT_TYPES.join(', ')}`);
    const events = [...new Set(values.event)] as WebhookEventType[];
    const created = await run((service) =>
      service.create(OPERATOR, {
        url: positionals[0]!,
        ...(events.length > 0 ? { event_types: events } : {}),
        ...(values.description !== undefined ? { description: values.description } : {}),
      }),
    );
    console.log(`added operator subscription ${created.id} for ${created.event_types.join(',')}\nsecret (shown this once): ${created.secret}`);
    return;
  }
  if (action === 'remove') {
    const subscription = id();
    await run((service) => service.remove(OPERATOR, subscription));
    console.log(`removed operator subscription ${subscription}`);
    return;
  }
  if (action === 'resume') {
    const subscription = id();
    await run((service) => service.resume(OPERATOR, subscription));
    console.log(`resumed operator subscription ${subscription}`);
    return;
  }
  if (action === 'deliveries') {
    const subscription = id();
    const { items } = await run((service) => service.deliveries(OPERATOR, subscription, { page: 1, per_page: 100 }));
    if (values.json) return console.log(JSON.stringify(items, null, 2));
    const line = (d: (typeof items)[number]) =>
      `${d.message_id}\t${d.event_type}\t${d.status}\t${d.attempts}\t${d.last_status_code ?? '-'}\t${d.last_error ?? '-'}\t${d.created_at}`;
    console.log(['message\ttype\tstatus\tattempts\tlast status\tlast error\tcreated', ...items.map(line)].join('\n'));
    return;
  }
  throw usageError(`usage: ${webhooksUsage}`);
}
