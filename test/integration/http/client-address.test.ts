/**
 * The client address behind `[http] trust_proxy`, with raw headers on loopback (test/e2e/nginx-proxy
 * puts a real nginx in front): the address the per-source brute-force limit counts (10 wrong invite
 * codes, then 429) must be one the client cannot choose.
 *   - false (the default): X-Forwarded-For is ignored; the socket's peer is the client.
 *   - a hop count (1): the peer is a proxy, and the client is the address it appended, the right-most;
 *     whatever the client wrote to the left of it changes nothing. With `true` Express took the
 *     left-most, so `X-Forwarded-For: <anything>, <real>` was a new address every time.
 *   - a list: only a peer in it is a proxy; anyone else is the client, whatever the header says.
 */
import { describe, expect, it } from 'vitest';

import { expectTooMany } from '../rate-limits/guesses.js';
import { freshClaim, freshLoopback, limitedAfter, statusesOf, wrongCodeFrom } from '../../support/client-address.js';
import { redisUrl } from '../../support/signaling.js';
import { useTestApp } from '../../support/test-app.js';

const FAILURES = 10; // the default failures_per_source
const SENT = 30;
const withRedis = redisUrl ? { redis: { url: redisUrl } } : {};

const app = useTestApp(withRedis);
const instance = (trust_proxy: false | number | string[]) => app.withConfig({ ...withRedis, http: { trust_proxy } });

async function expectLimitedAfter(failures: number, send: (i: number) => ReturnType<typeof wrongCodeFrom>) {
  const answers = [];
  for (let i = 0; i < SENT; i++) answers.push(await send(i));
  expect(answers.map(({ status }) => status)).toEqual(limitedAfter(failures, SENT));
  expectTooMany(answers.at(-1)!, 'verify_invite_code', 300);
}

describe('trust_proxy = false (the default)', () => {
  it('counts the socket peer, whatever X-Forwarded-For claims', async () => {
    expect(app.config.http.trust_proxy).toBe(false);
    const client = freshLoopback();
    await expectLimitedAfter(FAILURES, () => wrongCodeFrom(app.url, client, `${freshClaim()}, ${freshClaim()}`));
    // another peer has a budget of its own
    expect((await wrongCodeFrom(app.url, freshLoopback())).status).toBe(404);
  });
});

describe('trust_proxy = 1', () => {
  it('counts the address the proxy appended, however the client spoofs what is left of it', async () => {
    const behindOne = await instance(1);
    try {
      const proxy = freshLoopback();
      const client = freshClaim();
      // what nginx's $proxy_add_x_forwarded_for forwards for a client that sent X-Forwarded-For: <spoof>
      await expectLimitedAfter(FAILURES, (i) => wrongCodeFrom(behindOne.url, proxy, `198.51.100.${i + 1}, ${client}`));
      // the proxy's other clients are not refused: the proxy itself is no source
      const statuses = await statusesOf(3, () => wrongCodeFrom(behindOne.url, proxy, `${client}, ${freshClaim()}`));
      expect(statuses).not.toContain(429);
    } finally {
      await behindOne.close();
    }
  });
});

describe('trust_proxy = [<the proxy>]', () => {
  it('takes X-Forwarded-For from the listed proxy only', async () => {
    const proxy = freshLoopback();
    const listed = await instance([proxy]);
    try {
      const client = freshClaim();
      await expectLimitedAfter(FAILURES, (i) => wrongCodeFrom(listed.url, proxy, `198.51.100.${i + 1}, ${client}`));
      // a peer not in the list is the client, whatever it claims
      const direct = freshLoopback();
      await expectLimitedAfter(FAILURES, () => wrongCodeFrom(listed.url, direct, `${freshClaim()}, ${freshClaim()}`));
    } finally {
      await listed.close();
    }
  });
});
