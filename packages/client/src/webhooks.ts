/**
 * Webhook deliveries as a receiver gets them: their bodies typed by the contract's `webhooks`, and
 * `verifyWebhook`, which checks a delivery's Standard Webhooks signature and age with WebCrypto (so
 * it runs on Node 24, Deno, Bun and workers alike) before its body is trusted.
 */
import type { webhooks } from '../generated/openapi.js';

/** Every event type a subscription can ask for (`room.started`, `invite.accepted`, …). */
export type WebhookType = keyof webhooks;

/** The JSON body of a delivery of one event type, or (by default) of any: a union on `type`. */
export type WebhookBody<Type extends WebhookType = WebhookType> = Type extends WebhookType
  ? webhooks[Type]['post'] extends { requestBody: { content: { 'application/json': infer Body } } }
    ? Body
    : never
  : never;

/** The three headers of a delivery, as sent (`webhook-id`, `webhook-timestamp`, `webhook-signature`); one that is missing fails the check. */
export interface WebhookHeaders {
  'webhook-id'?: string;
  'webhook-timestamp'?: string;
  'webhook-signature'?: string;
}

export interface VerifyWebhookOptions {
  /** How far the delivery's timestamp may be from the receiver's clock; default 300 s (as Standard Webhooks advises). */
  toleranceSeconds?: number;
  /** The receiver's clock; tests pass their own. */
  now?: Date;
}

/** A delivery that is not Convene's or is too old or too new: answer it with a 4xx and drop it. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

const SECRET_PREFIX = 'whsec_';
const DEFAULT_TOLERANCE_SECONDS = 300;

/**
 * The delivery's body once its signature (one of the space-separated `v1,` ones) matches the raw
 * body under the subscription's secret and its timestamp is within the tolerance; else throws
 * `WebhookVerificationError`. Pass the body exactly as received: a re-serialised JSON does not match.
 * Dropping a `webhook-id` seen before (a retry of a delivery already handled) is the receiver's part.
 */
export async function verifyWebhook(secret: string, headers: WebhookHeaders, rawBody: string, options: VerifyWebhookOptions = {}): Promise<WebhookBody> {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'] ?? '';
  if (!id || !/^[0-9]{1,15}$/.test(timestamp)) throw new WebhookVerificationError('missing or malformed webhook-id or webhook-timestamp');
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) {
    throw new WebhookVerificationError('the delivery is too old or too new (webhook-timestamp)');
  }
  const expected = await sign(secret, `${id}.${timestamp}.${rawBody}`);
  const offered = (headers['webhook-signature'] ?? '')
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => entry.slice(3));
  if (!offered.some((candidate) => sameText(candidate, expected))) throw new WebhookVerificationError('no signature matches the body under this secret');
  try {
    return JSON.parse(rawBody) as WebhookBody;
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
}

/** base64 of HMAC-SHA256 keyed with the secret's bytes (the part after `whsec_`, base64-decoded). */
async function sign(secret: string, content: string): Promise<string> {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  let keyBytes: Uint8Array<ArrayBuffer>;
  try {
    keyBytes = Uint8Array.from(atob(encoded), (char) => char.charCodeAt(0));
  } catch {
    throw new WebhookVerificationError('the secret is not a whsec_ secret');
  }
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(content)));
  return btoa(String.fromCharCode(...mac));
}

/** Equality whose time does not depend on where the strings first differ. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}
