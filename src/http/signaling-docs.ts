/**
 * The signaling contract (spec/asyncapi.yaml) rendered on the server into plain HTML for /docs: its
 * operations and, for every message, an anchor `signaling-<message name>` (dots as dashes, e.g.
 * `#signaling-timer-start`) with its payload schema and examples. Static markup and no script, so it
 * works offline and under a script-src 'self' policy; every value from the document is escaped.
 */

/** The parts of an AsyncAPI 3 document rendered here; schemas and examples are shown as JSON, whatever they hold. */
interface AsyncApiDocument {
  info?: { title?: string; version?: string; description?: string };
  channels?: Record<string, Channel>;
  operations?: Record<string, Operation>;
}

interface Channel {
  address?: string;
  description?: string;
  messages?: Record<string, Message>;
}

interface Operation {
  action?: string;
  title?: string;
  summary?: string;
  description?: string;
  messages?: Message[];
}

/** A message, or a `$ref` to one (then resolve() gives the message). */
interface Message {
  $ref?: string;
  name?: string;
  title?: string;
  summary?: string;
  description?: string;
  payload?: unknown;
  examples?: { name?: string; payload?: unknown }[];
}

type JsonNode = Record<string, unknown> | null | undefined;

const escapeHtml = (text: unknown): string =>
  String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The anchor of a message on /docs: `control.join` -> `signaling-control-join`. */
export const messageAnchor = (name: string): string => `signaling-${name.replace(/[^A-Za-z0-9_-]+/g, '-')}`;

/** Follows a local `$ref` (`#/a/b`) within the document; anything else is returned as is. */
function resolve<T>(doc: AsyncApiDocument, node: T): T {
  const ref = (node as JsonNode)?.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return node;
  const target = ref
    .slice(2)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((at, key) => (at as JsonNode)?.[key], doc);
  return target === undefined ? node : resolve(doc, target as T);
}

const pre = (value: unknown): string => `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`;
const text = (value: unknown): string => (value ? `<p class="text">${escapeHtml(value)}</p>` : '');

function renderMessage(doc: AsyncApiDocument, key: string, message: Message): string {
  const name = message.name ?? key;
  const examples = message.examples ?? [];
  return [
    `<article class="message" id="${escapeHtml(messageAnchor(name))}">`,
    `<h4><a href="#${escapeHtml(messageAnchor(name))}">${escapeHtml(name)}</a>${message.title ? ` — ${escapeHtml(message.title)}` : ''}</h4>`,
    text(message.summary),
    text(message.description),
    '<h5>Payload</h5>',
    pre(resolve(doc, message.payload)),
    ...examples.map((example) => `<h5>Example${example.name ? ` ${escapeHtml(example.name)}` : ''}</h5>${pre(example.payload)}`),
    '</article>',
  ].join('\n');
}

function renderOperation(doc: AsyncApiDocument, id: string, operation: Operation): string {
  const messages = (operation.messages ?? []).map((ref) => resolve(doc, ref));
  const direction = operation.action === 'receive' ? 'client → service' : 'service → client';
  return [
    `<section class="operation" id="signaling-operation-${escapeHtml(id)}">`,
    `<h3>${escapeHtml(operation.title ?? id)} <small>(${escapeHtml(direction)})</small></h3>`,
    text(operation.summary),
    text(operation.description),
    '<ul>',
    ...messages.map(
      (m) => `<li><a href="#${escapeHtml(messageAnchor(m.name!))}">${escapeHtml(m.name)}</a>${m.summary ? `: ${escapeHtml(m.summary)}` : ''}</li>`,
    ),
    '</ul>',
    '</section>',
  ].join('\n');
}

/** The HTML section for the whole document. */
export function renderSignalingReference(doc: AsyncApiDocument): string {
  const channels = Object.entries(doc.channels ?? {});
  const operations = Object.entries(doc.operations ?? {});
  return [
    '<section id="signaling-reference" class="signaling-reference">',
    `<h2>${escapeHtml(doc.info?.title ?? 'Signaling')} <small>${escapeHtml(doc.info?.version ?? '')}</small></h2>`,
    '<p>The contract itself: <a href="/v1/asyncapi.json">/v1/asyncapi.json</a>, <a href="/v1/asyncapi.yaml">/v1/asyncapi.yaml</a>.</p>',
    text(doc.info?.description),
    ...channels.map(([id, channel]) => `<h3>Channel ${escapeHtml(id)} <code>${escapeHtml(channel.address ?? '')}</code></h3>${text(channel.description)}`),
    '<h2>Operations</h2>',
    ...operations.map(([id, operation]) => renderOperation(doc, id, operation)),
    '<h2>Messages</h2>',
    ...channels.flatMap(([, channel]) => Object.entries(channel.messages ?? {}).map(([key, ref]) => renderMessage(doc, key, resolve(doc, ref)))),
    '</section>',
  ].join('\n');
}

export const signalingCss = `.signaling-reference { font-family: sans-serif; max-width: 1460px; margin: 2em auto; padding: 0 20px; color: #3b4151; }
.signaling-reference .text { white-space: pre-wrap; }
.signaling-reference pre { background: #f4f4f4; padding: 0.6em; overflow-x: auto; font-size: 12px; }
.signaling-reference .message { border-top: 1px solid #ddd; padding-top: 0.5em; }
.signaling-reference .message:target { background: #fffbe6; }
`;
