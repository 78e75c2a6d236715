/**
 * The client's webhook verifier (packages/client/src/webhooks.ts): the Standard Webhooks reference
 * vector, a delivery signed by the server's own signing code, and every way a delivery is refused.
 */
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError, type WebhookBody } from '../../../packages/client/src/index.js';
import { newSecret, signature } from '../../../src/domain/webhooks/signature.js';

// the published Standard Webhooks (and Svix) example
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const AT_VECTOR = new Date(VECTOR.timestamp * 1000);

function headers(id: string, timestamp: number, signed: string) {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signed };
}

describe('verifyWebhook', () => {
  it('accepts the reference vector, also among other signatures', async () => {
    await expect(verifyWebhook(VECTOR.secret, headers(VECTOR.id, VECTOR.timestamp, VECTOR.signature), VECTOR.body, { now: AT_VECTOR })).resolves.toEqual({
      test: 2432232314,
    });
    const several = `v1,AAAA v2,ignored ${VECTOR.signature}`;
    await expect(verifyWebhook(VECTOR.secret, headers(VECTOR.id, VECTOR.timestamp, several), VECTOR.body, { now: AT_VECTOR })).resolves.toEqual({
      test: 2432232314,
    });
  });

  it('accepts what the server signs, and types the body by its type', async () => {
    const secret = newSecret();
    const now = new Date();
    const timestamp = Math.floor(now.getTime() / 1000);
    const body = JSON.stringify({ id: 'msg_1', type: 'room.started', timestamp: now.toISOString(), data: { room_id: '00000000-0000-4000-8000-000000000001' } });
    const delivered: WebhookBody = await verifyWebhook(secret, headers('msg_1', timestamp, signature(secret, 'msg_1', timestamp, body)), body, { now });
    expect(delivered.type).toBe('room.started');
  });

  it.each([
    ['a changed body', VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.signature, '{"test": 2432232315}'],
    ['another id', VECTOR.secret, 'msg_other', VECTOR.timestamp, VECTOR.signature, VECTOR.body],
    ['another secret', 'whsec_' + btoa('another secret of 24 b!'), VECTOR.id, VECTOR.timestamp, VECTOR.signature, VECTOR.body],
    ['no v1 signature', VECTOR.secret, VECTOR.id, VECTOR.timestamp, 'v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=', VECTOR.body],
    ['a truncated signature', VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.signature.slice(0, -1), VECTOR.body],
    ['a secret that is no base64', 'whsec_not base64!', VECTOR.id, VECTOR.timestamp, VECTOR.signature, VECTOR.body],
    ['no id', VECTOR.secret, '', VECTOR.timestamp, VECTOR.signature, VECTOR.body],
  ])('refuses %s', async (_case, secret, id, timestamp, signed, body) => {
    await expect(verifyWebhook(secret, headers(id, timestamp, signed), body, { now: AT_VECTOR })).rejects.toBeInstanceOf(WebhookVerificationError);
  });

  it('refuses a delivery outside the tolerance, at its edge', async () => {
    const at = (seconds: number) => ({ now: new Date((VECTOR.timestamp + seconds) * 1000) });
    const delivered = headers(VECTOR.id, VECTOR.timestamp, VECTOR.signature);
    await expect(verifyWebhook(VECTOR.secret, delivered, VECTOR.body, at(300))).resolves.toBeDefined();
    await expect(verifyWebhook(VECTOR.secret, delivered, VECTOR.body, at(-300))).resolves.toBeDefined();
    await expect(verifyWebhook(VECTOR.secret, delivered, VECTOR.body, at(301))).rejects.toThrow(/too old or too new/);
    await expect(verifyWebhook(VECTOR.secret, delivered, VECTOR.body, at(-301))).rejects.toThrow(/too old or too new/);
    await expect(verifyWebhook(VECTOR.secret, delivered, VECTOR.body, { ...at(10), toleranceSeconds: 9 })).rejects.toThrow(/too old or too new/);
    await expect(verifyWebhook(VECTOR.secret, { ...delivered, 'webhook-timestamp': '1.6e9' }, VECTOR.body, at(0))).rejects.toThrow(/malformed/);
  });
});
