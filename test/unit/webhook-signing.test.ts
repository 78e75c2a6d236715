/**
 * Webhook signatures against the Standard Webhooks reference test vector, and which addresses a
 * webhook may not reach.
 */
import { describe, expect, it } from 'vitest';
import { newSecret, signature } from '../../src/domain/webhooks/signature.js';
import { isInternalAddress } from '../../src/domain/webhooks/target-address.js';

describe('signature', () => {
  it('matches the Standard Webhooks reference vector', () => {
    // the published Standard Webhooks (and Svix) example vector
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(signature(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('makes secrets of 24 random bytes', () => {
    const secret = newSecret();
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(24);
    expect(newSecret()).not.toBe(secret);
  });
});

describe('isInternalAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    '64:ff9b::a00:1',
    'not-an-address',
  ])('%s is internal', (address) => expect(isInternalAddress(address)).toBe(true));

  it.each(['192.0.2.10', '8.8.8.8', '172.15.255.255', '172.32.0.1', '100.63.255.255', '2001:db8::1', '2606:4700::1111', '::ffff:8.8.8.8'])(
    '%s is public',
    (address) => expect(isInternalAddress(address)).toBe(false),
  );
});
