import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { openapiDocument } from '../../../generated/openapi-document.js';
import { NOT_YET_IMPLEMENTED } from '../../../src/http/handlers/not-yet.js';
import { operations } from '../../../generated/operations.js';
import { startTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

let app: TestApp;
let alice: TestUser;
beforeAll(async () => {
  app = await startTestApp();
  alice = await app.login('alice');
});
afterAll(() => app?.close());

describe('errors at the edge', () => {
  // every operation whose body must set something: unknown fields are ignored, so they set nothing
  const resolve = (schema: any): any =>
    schema?.$ref
      ? resolve(
          schema.$ref
            .slice(2)
            .split('/')
            .reduce((node: any, key: string) => node[key], openapiDocument),
        )
      : schema;
  const nonEmptyBodies = Object.entries(operations).filter(([, op]) => {
    const schema = resolve(openapiDocument.paths[op.path][op.method].requestBody?.content?.['application/json']?.schema);
    return schema?.minProperties > 0;
  });

  it('has operations whose body must not be empty', () => {
    expect(nonEmptyBodies.map(([id]) => id).sort()).toEqual([
      'patch_event',
      'patch_event_instance',
      'patch_me',
      'patch_room',
      'patch_room_streaming_target',
      'put_room_sip_config',
      'update_room_invite',
    ]);
  });

  it.each(nonEmptyBodies)('%s refuses a body of unknown fields only like an empty one', async (_id, { method, path }) => {
    const concrete = path.replace(/\{[^}]+\}/g, (m) => (m === '{instance_id}' ? '20260101T100000Z' : '6f1c1f0e-8d0f-4b8e-9e55-0c5a2b8a1f00'));
    for (const body of ['{}', '{"no_such_field": 1}']) {
      const res = await app.request(method.toUpperCase(), `/v1${concrete}`, {
        headers: { authorization: `Bearer ${alice.accessToken}`, 'content-type': 'application/json' },
        body,
      });
      expect(res.status, `${body}: ${res.text_}`).toBe(400);
      const answer = JSON.parse(res.text_);
      expect(answer.code).toBe('validation_failed');
      // missing_values, or value_required where the one field is also required (update_room_invite)
      expect(answer.errors.map((e: { code: string }) => e.code)).toEqual(expect.arrayContaining([expect.stringMatching(/^(missing_values|value_required)$/)]));
    }
  });

  it('answers an unknown route with 404 and the error body', async () => {
    for (const path of ['/v1/nothing-here', '/nothing', '/v1/rooms/x/y/z']) {
      const res = await fetch(`${app.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject({ code: 'not_found', status: '404', documentation_url: expect.any(String) });
    }
  });

  it('answers a known path with a wrong method with 405 and Allow', async () => {
    const res = await fetch(`${app.url}/v1/users/me`, { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('GET');
    expect(await res.json()).toMatchObject({ code: 'method_not_allowed', status: '405' });
  });

  // runs only while some operation of the contract is still unbuilt
  it.skipIf(Object.keys(NOT_YET_IMPLEMENTED).length === 0).each(Object.entries(NOT_YET_IMPLEMENTED))(
    '%s answers 501 with the error body until issue %i lands',
    async (id) => {
      const { method, path } = operations[id as keyof typeof operations];
      const concrete = path.replace(/\{[^}]+\}/g, (m) => (m === '{instance_id}' ? '20260101T100000Z' : '6f1c1f0e-8d0f-4b8e-9e55-0c5a2b8a1f00'));
      const op = openapiDocument.paths[path][method];
      const content = op.requestBody?.content ?? {};
      const type = Object.keys(content)[0];
      const body = type === 'application/json' ? JSON.stringify(content[type].example ?? {}) : type ? 'bytes' : undefined;
      const query = id === 'create_room_asset' ? '?filename=a.txt' : '';
      // the call-in start is for gateways holding a service token with the call-in role
      const token = id === 'start_call_in' ? await app.issuer.serviceToken(['call-in']) : alice.accessToken;
      const res = await app.request(method.toUpperCase(), `/v1${concrete}${query}`, {
        headers: { authorization: `Bearer ${token}`, ...(type ? { 'content-type': type } : {}) },
        body,
      });
      expect(res.status, res.text_).toBe(501);
      expect(JSON.parse(res.text_)).toMatchObject({ code: 'not_implemented', status: '501' });
    },
  );
});

describe('access', () => {
  const all = Object.entries(operations).map(([id, op]) => {
    const spec = openapiDocument.paths[op.path][op.method];
    return [id, op.method, op.path, spec.security as unknown[]] as const;
  });

  it.each(all.filter(([, , , security]) => security.length > 0))('%s refuses anonymous callers with 401 and a challenge', async (_id, method, path) => {
    const concrete = path.replace(/\{[^}]+\}/g, (m) => (m === '{instance_id}' ? '20260101T100000Z' : '6f1c1f0e-8d0f-4b8e-9e55-0c5a2b8a1f00'));
    const res = await app.request(method.toUpperCase(), `/v1${concrete}`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(JSON.parse(res.text_)).toMatchObject({ status: '401' });
  });

  it('lists exactly the operations the interface leaves open to anonymous callers', () => {
    const open = all.filter(([, , , security]) => security.length === 0).map(([id]) => id);
    expect(open.sort()).toEqual([
      'get_calendar_feed_ics',
      'get_health',
      'get_login_provider',
      'get_ready',
      'login',
      'start_invited_room',
      'verify_invite_code',
    ]);
  });
});

describe('hostile input', () => {
  const auth = () => ({ authorization: `Bearer ${alice.accessToken}` });
  it.each([
    ['a malformed percent escape in a path id', '/v1/users/%E0%A4%A'],
    ['a null byte in a path id', '/v1/users/%00'],
    ['a null byte in a query', '/v1/users/find?q=ab%00cd'],
    ['a malformed escape in a query', '/v1/users?page=%ZZ'],
    ['an over-long query', `/v1/users/find?q=${'a'.repeat(300)}`],
    ['an array where a scalar belongs', '/v1/users?per_page=1&per_page=2'],
    ['a uuid as a URN (ajv-formats takes it, PostgreSQL does not)', '/v1/rooms/urn:uuid:6f2d8a41-7c3e-4b95-9e1a-2c4d6b8f0e13'],
    ['a page past 2^32 - 1 (1e308 once reached the database as an offset)', '/v1/rooms?page=1e308'],
  ])('answers %s with a 4xx and the error body', async (_what, path) => {
    const res = await fetch(`${app.url}${path}`, { headers: auth() });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(await res.json()).toMatchObject({ code: expect.any(String), status: String(res.status) });
  });

  it('ignores unknown query parameters, as unknown body fields', async () => {
    for (const path of ['/health?_=1764583200', '/v1/rooms?per_page[]=1&no_such=x', '/v1/users/me?%ED%BF%BF=1']) {
      const res = await app.request('GET', path, { headers: auth() });
      expect(res.status, `${path}: ${res.text_}`).toBe(200);
    }
  });

  it('accepts the last page number and refuses the next', async () => {
    expect((await app.request('GET', '/v1/rooms?page=4294967295', { headers: auth() })).status).toBe(200);
    const over = await app.request('GET', '/v1/rooms?page=4294967296', { headers: auth() });
    expect(JSON.parse(over.text_)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'page', code: 'out_of_range' }] });
  });

  it('names an unknown field of a closed object in its error', async () => {
    const res = await app.request('POST', '/v1/events', {
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({
        title: 'T',
        description: '',
        is_time_independent: false,
        is_all_day: false,
        starts_at: { datetime: '2030-01-07T09:00:00Z', timezone: 'Europe/Berlin', zone: 'x' },
        ends_at: { datetime: '2030-01-07T10:00:00Z', timezone: 'Europe/Berlin' },
      }),
    });
    expect(JSON.parse(res.text_)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'starts_at.zone', code: 'unknown_field' }] });
  });

  it('accepts a 255-character search and refuses 256', async () => {
    const ok = await app.request('GET', `/v1/users/find?q=${'a'.repeat(255)}`, { headers: auth() });
    expect(ok.status).toBe(200);
    const long = await app.request('GET', `/v1/users/find?q=${'a'.repeat(256)}`, { headers: auth() });
    expect(long.status).toBe(400);
  });

  it('refuses a NUL character inside a JSON field and stores nothing', async () => {
    const res = await app.request('PATCH', '/v1/users/me', {
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Dr.\u0000' }),
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text_)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'title', code: 'invalid_value' }] });
    const me = await app.api(alice.accessToken).GET('/users/me');
    expect(me.data!.title).toBe('');
  });

  it('refuses an unpaired surrogate inside a JSON field (once a 500 from the database) and keeps a pair', async () => {
    const res = await app.request('PATCH', '/v1/users/me', {
      headers: { ...auth(), 'content-type': 'application/json' },
      body: '{"title":"é\\udfff","display_name":"\\ud83d\\ude00 Alice"}', // escapes in the JSON: a JS string would send U+FFFD
    });
    expect(JSON.parse(res.text_)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'title', code: 'invalid_value' }] });
    const pair = await app.request('PATCH', '/v1/users/me', { headers: { ...auth(), 'content-type': 'application/json' }, body: '{"title":"\\ud83d\\ude00"}' });
    expect(JSON.parse(pair.text_).title).toBe('😀');
  });

  it('answers JSON that is not an object with 400', async () => {
    for (const body of ['"text"', '42', 'null', '[]']) {
      const res = await app.request('PATCH', '/v1/users/me', { headers: { ...auth(), 'content-type': 'application/json' }, body });
      expect(res.status, body).toBe(400);
    }
  });
});

describe('request id', () => {
  it('echoes a well-formed x-request-id and makes one up otherwise', async () => {
    const echoed = await fetch(`${app.url}/health`, { headers: { 'x-request-id': 'abc-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('abc-123');
    const made = await fetch(`${app.url}/health`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('CORS', () => {
  it('answers preflights and exposes Link', async () => {
    const res = await fetch(`${app.url}/v1/users`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization,content-type' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toContain('PATCH');
    const get = await fetch(`${app.url}/v1/users`, { headers: { origin: 'https://app.example', authorization: `Bearer ${alice.accessToken}` } });
    expect(get.headers.get('access-control-expose-headers')).toContain('Link');
  });
});

describe('request validators', () => {
  it('compile for every operation of the contract', async () => {
    await expect(app.convene.warmUp()).resolves.toBeUndefined();
  });
});

describe('health, docs, spec and metrics', () => {
  it('answers /health with 200 while the database answers', async () => {
    const res = await app.request('GET', '/health');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text_)).toEqual({ status: 'ok', database: 'up' });
  });

  it('serves the contract at /v1/openapi.json', async () => {
    const res = await fetch(`${app.url}/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(openapiDocument);
  });

  // Read from the spec file itself, not the generated module the service serves, so a stale
  // generated copy fails here.
  const asyncapiSource = readFileSync(new URL('../../../spec/asyncapi.yaml', import.meta.url), 'utf8');

  it('serves the signaling contract at /v1/asyncapi.json', async () => {
    const res = await fetch(`${app.url}/v1/asyncapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json\b/);
    expect(await res.json()).toEqual(parse(asyncapiSource));
  });

  it('serves the signaling contract as written at /v1/asyncapi.yaml', async () => {
    const res = await fetch(`${app.url}/v1/asyncapi.yaml`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/yaml\b/);
    expect(await res.text()).toBe(asyncapiSource);
  });

  it('serves a rendered reference at /docs with its assets, offline', async () => {
    const page = await fetch(`${app.url}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('swagger-ui-bundle.js');
    // nothing loaded from elsewhere (the rendered signaling contract mentions URLs in its text)
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html).toContain('id="signaling-reference"');
    const bundle = await fetch(`${app.url}/docs/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  });

  it('counts requests per operationId at /metrics', async () => {
    await app.api(alice.accessToken).GET('/users/me');
    const text = await (await fetch(`${app.url}/metrics`)).text();
    expect(text).toMatch(/convene_http_requests_total\{operation="get_me",method="GET",status="200"\} [1-9]/);
    expect(text).toContain('convene_http_request_duration_seconds_bucket{le="0.005",operation="get_me"}');
  });
});
