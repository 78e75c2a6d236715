/**
 * What every answer of the HTTP edge carries (issue 22): `X-Content-Type-Options: nosniff` on all
 * of them (a browser must not sniff a JSON error or an upload into HTML), and a Content Security
 * Policy with frame protection on the API reference at /docs. That the policy does not break the
 * page is test/e2e/docs-anchors.test.ts's part (Chromium renders it under the policy).
 */
import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const app = useTestApp();
let alice: TestUser;
beforeAll(async () => {
  alice = await app.login('alice');
});

/** A WebSocket opening refused before the upgrade (no protocol offered): its plain HTTP answer's headers. */
function refusedOpening(): Promise<Record<string, string | string[] | undefined>> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${app.url}/signaling`, {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' },
    });
    req.once('response', (res) => {
      res.resume();
      resolve(res.headers);
    });
    req.once('error', reject);
    req.end();
  });
}

describe('X-Content-Type-Options: nosniff', () => {
  it.each([
    ['an operation', 'GET', '/v1/users/me'],
    ['an error', 'GET', '/v1/rooms/not-a-uuid'],
    ['an unknown route', 'GET', '/v1/nothing-here'],
    ['a wrong method', 'DELETE', '/v1/users/me'],
    ['the health probe', 'GET', '/health'],
    ['the contract', 'GET', '/v1/openapi.json'],
    ['the reference', 'GET', '/docs'],
    ["the reference's script", 'GET', '/docs/swagger-ui-bundle.js'],
    ['the metrics', 'GET', '/metrics'],
    ['a preflight', 'OPTIONS', '/v1/rooms'],
  ])('is on %s (%s %s)', async (_what, method, path) => {
    const res = await fetch(`${app.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${alice.accessToken}`,
        ...(method === 'OPTIONS' ? { origin: 'https://app.example', 'access-control-request-method': 'GET' } : {}),
      },
    });
    await res.arrayBuffer();
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('is on a refused signaling opening', async () => {
    expect((await refusedOpening())['x-content-type-options']).toBe('nosniff');
  });
});

describe('/docs', () => {
  it.each(['/docs', '/docs/', '/docs/init.js', '/docs/swagger-ui.css'])('%s is served under a Content Security Policy and may not be framed', async (path) => {
    const res = await fetch(`${app.url}${path}`);
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    const policy = res.headers.get('content-security-policy') ?? '';
    const directives = new Map(
      policy
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...values]) => [name, values]),
    );
    expect(directives.get('default-src')).toEqual(["'self'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]); // no inline script, no eval, nothing from elsewhere
    expect(directives.get('object-src')).toEqual(["'none'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
  });

  it('loads its script from a file, not inline (the policy allows no inline script)', async () => {
    const html = await (await fetch(`${app.url}/docs`)).text();
    expect(html).not.toMatch(/<script>(?!<\/script>)/);
    expect(html).toMatch(/<script src="\/docs\/init\.js"><\/script>/);
  });
});
