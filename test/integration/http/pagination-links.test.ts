/**
 * The `Link` header of paginated lists (issue 22): it carries only the parameters the operation
 * declares (it copied every query parameter into each of its four links, so a 14 KB query made
 * 56 KB of headers), and its links point at `[http] public_url`, or else at the request's own host
 * only when that is a well-formed host (the Host header went into it as sent).
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { insertRoom } from '../../support/room-content.js';
import { useTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

const app = useTestApp();
let alice: TestUser;
beforeEach(async () => {
  alice = await app.login('alice');
  for (let i = 0; i < 3; i++) await insertRoom(app, alice);
});

/** GET `path` with any Host header (fetch cannot send one of its own), answering the status and Link. */
function getWithHost(target: TestApp, path: string, host: string, token: string): Promise<{ status: number; link: string | undefined }> {
  const { port } = new URL(target.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host, authorization: `Bearer ${token}` } });
    req.once('response', (res) => {
      res.resume();
      resolve({ status: res.statusCode!, link: res.headers.link as string | undefined });
    });
    req.once('error', reject);
    req.end();
  });
}

const targetsOf = (link: string) => [...link.matchAll(/<([^>]*)>/g)].map((match) => match[1]!);

describe('the Link header of a page', () => {
  it('names only the parameters the operation declares, however long the query', async () => {
    const junk = 'x'.repeat(14 * 1024);
    const res = await fetch(`${app.url}/v1/rooms?page=2&per_page=1&junk=${junk}&other=1`, { headers: { authorization: `Bearer ${alice.accessToken}` } });
    expect(res.status).toBe(200);
    const link = res.headers.get('link')!;
    expect(link.length).toBeLessThan(1024);
    const targets = targetsOf(link);
    expect(targets).toHaveLength(4);
    for (const target of targets) expect([...new URL(target).searchParams.keys()].sort()).toEqual(['page', 'per_page']);
    expect(targets.map((t) => new URL(t).searchParams.get('page'))).toEqual(['1', '1', '3', '3']);
  });

  it('keeps the declared filters of the events listing and drops the rest', async () => {
    const created = await app.api(alice.accessToken).POST('/events', {
      body: { title: 'Weekly', description: '', is_time_independent: true, is_adhoc: false, waiting_room: false, show_meeting_details: false },
    });
    expect(created.response.status).toBe(201);
    await app.api(alice.accessToken).POST('/events', {
      body: { title: 'Other', description: '', is_time_independent: true, is_adhoc: false, waiting_room: false, show_meeting_details: false },
    });
    const res = await fetch(`${app.url}/v1/events?per_page=1&favorites=false&junk=${'y'.repeat(8000)}`, {
      headers: { authorization: `Bearer ${alice.accessToken}` },
    });
    expect(res.status).toBe(200);
    const [target] = targetsOf(res.headers.get('link')!);
    expect([...new URL(target!).searchParams.keys()].sort()).toEqual(['after', 'favorites', 'per_page']);
  });

  it('points at the request host when it is a well-formed host', async () => {
    const { port } = new URL(app.url);
    for (const host of [`localhost:${port}`, 'meet.example.org', '[::1]:8080', '192.0.2.7']) {
      const { status, link } = await getWithHost(app, '/v1/rooms?per_page=1', host, alice.accessToken);
      expect(status).toBe(200);
      for (const target of targetsOf(link!)) expect(target.startsWith(`http://${host}/v1/rooms?`), `${host}: ${target}`).toBe(true);
    }
  });

  it('never puts a malformed Host into a link: the links are then relative to the request', async () => {
    for (const host of ['evil.example/x?', 'a@evil.example', 'evil.example:99999', 'evil.example:80:80', '-', 'ev"il']) {
      const { status, link } = await getWithHost(app, '/v1/rooms?per_page=1', host, alice.accessToken);
      expect(status, host).toBe(200);
      for (const target of targetsOf(link!)) expect(target.startsWith('/v1/rooms?'), `${host}: ${target}`).toBe(true);
    }
  });
});

describe('with [http] public_url', () => {
  let configured: TestApp;
  beforeAll(async () => {
    configured = await app.withConfig({ http: { host: '127.0.0.1', port: 0, public_url: 'https://meet.example.org' } });
  });
  afterAll(() => configured?.close());

  it('points every link at the public URL, whatever Host the request names', async () => {
    const { status, link } = await getWithHost(configured, '/v1/rooms?per_page=1', 'evil.example', alice.accessToken);
    expect(status).toBe(200);
    const targets = targetsOf(link!);
    expect(targets.length).toBeGreaterThan(0);
    for (const target of targets) expect(target.startsWith('https://meet.example.org/v1/rooms?')).toBe(true);
  });
});
