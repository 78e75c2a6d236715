/**
 * Streaming targets: the limits of the contract at their edges, absolute URIs, malformed bodies, and
 * page pagination with `Link`.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { cast, headersOf, TARGET, type Cast } from '../../support/room-content.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();
let c: Cast;
beforeEach(async () => {
  c = await cast(app);
});

const base = () => `/v1/rooms/${c.roomId}/streaming_targets`;
const send = (method: string, path: string, body: string, contentType = 'application/json') =>
  app.request(method, path, { headers: headersOf(c.owner, contentType), body });
const create = (body: Record<string, unknown>) => send('POST', base(), JSON.stringify(body));
const errorOf = (res: { text_: string }) => JSON.parse(res.text_) as { code: string; errors?: { field?: string; code: string }[] };

/** A URI of exactly `length` characters. */
const uriOf = (length: number) => {
  const prefix = 'rtmp://live.example.org/';
  return prefix + 'a'.repeat(length - prefix.length);
};

describe('limits at their edges', () => {
  it.each([
    ['name', 255, (n: number) => 'n'.repeat(n)],
    ['streaming_key', 1024, (n: number) => 'k'.repeat(n)],
    ['streaming_endpoint', 2048, uriOf],
    ['public_url', 2048, uriOf],
  ] as const)('%s: %i characters are accepted, one more is 400 — on create and on patch', async (field, max, value) => {
    const ok = await create({ ...TARGET, [field]: value(max) });
    expect(ok.status, ok.text_).toBe(201);
    const id = JSON.parse(ok.text_).id;
    expect(JSON.parse(ok.text_)[field]).toBe(value(max));

    const tooLong = await create({ ...TARGET, [field]: value(max + 1) });
    expect(tooLong.status).toBe(400);
    expect(errorOf(tooLong)).toMatchObject({ code: 'validation_failed', errors: [{ field, code: 'invalid_length' }] });

    expect((await send('PATCH', `${base()}/${id}`, JSON.stringify({ [field]: value(max) }))).status).toBe(200);
    const patchTooLong = await send('PATCH', `${base()}/${id}`, JSON.stringify({ [field]: value(max + 1) }));
    expect(patchTooLong.status).toBe(400);
    expect(errorOf(patchTooLong).errors).toEqual([expect.objectContaining({ field, code: 'invalid_length' })]);
  });

  it.each(['name', 'streaming_key'])('refuses an empty %s', async (field) => {
    const res = await create({ ...TARGET, [field]: '' });
    expect(res.status).toBe(400);
    expect(errorOf(res).errors).toEqual([expect.objectContaining({ field, code: 'invalid_length' })]);
  });
});

describe('absolute URIs', () => {
  it.each(['rtmp://host/app', 'rtmps://live.example.org:443/app?x=1', 'https://video.example.org/company', 'srt://10.0.0.1:9000'])(
    'accepts %s',
    async (uri) => {
      const res = await create({ ...TARGET, streaming_endpoint: uri, public_url: uri });
      expect(res.status, res.text_).toBe(201);
      expect(JSON.parse(res.text_)).toMatchObject({ streaming_endpoint: uri, public_url: uri });
    },
  );

  it.each([
    'relative/path',
    '/absolute/path/only',
    'http://',
    'rtmp://',
    'http:x',
    'http:/x',
    'mailto:live@example.org',
    'live.example.org/app',
    'rtmp:// host/app',
  ])('refuses %s as streaming_endpoint and as public_url, on create and on patch', async (uri) => {
    for (const field of ['streaming_endpoint', 'public_url']) {
      const res = await create({ ...TARGET, [field]: uri });
      expect(res.status, `${field}=${uri}`).toBe(400);
      expect(errorOf(res)).toMatchObject({ code: 'validation_failed', errors: [{ field }] });
    }
    const id = JSON.parse((await create(TARGET)).text_).id;
    const patch = await send('PATCH', `${base()}/${id}`, JSON.stringify({ public_url: uri }));
    expect(patch.status).toBe(400);
    const kept = await app.request('GET', `${base()}/${id}`, { headers: headersOf(c.owner) });
    expect(JSON.parse(kept.text_).public_url).toBe(TARGET.public_url);
  });
});

describe('malformed bodies', () => {
  it.each(['name', 'kind', 'streaming_endpoint', 'streaming_key', 'public_url'])('refuses a create body without %s', async (field) => {
    const { [field as keyof typeof TARGET]: _omitted, ...rest } = TARGET;
    const res = await create(rest);
    expect(res.status).toBe(400);
    expect(errorOf(res).errors).toEqual([expect.objectContaining({ field, code: 'value_required' })]);
  });

  it('refuses a kind other than custom, and values of the wrong type', async () => {
    expect((await create({ ...TARGET, kind: 'youtube' })).status).toBe(400);
    expect((await create({ ...TARGET, name: 42 })).status).toBe(400);
    expect((await create({ ...TARGET, streaming_key: null })).status).toBe(400);
  });

  it('ignores unknown fields on create', async () => {
    const res = await create({ ...TARGET, owner_id: c.stranger.id, id: '00000000-0000-4000-8000-000000000000' });
    expect(res.status).toBe(201);
    expect(JSON.parse(res.text_).id).not.toBe('00000000-0000-4000-8000-000000000000');
  });

  it('answers 400 invalid_json to broken JSON, 415 to another media type, 400 to no body', async () => {
    const broken = await send('POST', base(), '{"name": ');
    expect(broken.status).toBe(400);
    expect(errorOf(broken).code).toBe('invalid_json');
    const text = await send('POST', base(), JSON.stringify(TARGET), 'text/plain');
    expect(text.status).toBe(415);
    expect(errorOf(text).code).toBe('invalid_content_type');
    const none = await app.request('POST', base(), { headers: headersOf(c.owner) });
    expect(none.status).toBe(400);
    expect((await app.request('GET', base(), { headers: headersOf(c.owner) })).text_).toBe('[]');
  });

  it('refuses a patch that names no known field (empty, or unknown fields only)', async () => {
    const id = JSON.parse((await create(TARGET)).text_).id;
    for (const body of [{}, { colour: 'blue' }]) {
      const res = await send('PATCH', `${base()}/${id}`, JSON.stringify(body));
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(errorOf(res).code).toBe('validation_failed');
    }
    const mixed = await send('PATCH', `${base()}/${id}`, JSON.stringify({ colour: 'blue', kind: 'custom' }));
    expect(mixed.status).toBe(200);
  });
});

describe('pagination', () => {
  it('pages in creation order with Link first/prev/next/last', async () => {
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) ids.push(JSON.parse((await create({ ...TARGET, name })).text_).id);

    const first = await app.request('GET', `${base()}?per_page=2`, { headers: headersOf(c.owner) });
    expect(JSON.parse(first.text_).map((t: { id: string }) => t.id)).toEqual(ids.slice(0, 2));
    const firstLink = first.headers.get('link')!;
    expect(firstLink).toContain('page=2');
    expect(firstLink).toContain('rel="next"');
    expect(firstLink).toContain('rel="last"');
    expect(firstLink).not.toContain('rel="prev"');

    const second = await app.request('GET', `${base()}?per_page=2&page=2`, { headers: headersOf(c.owner) });
    expect(JSON.parse(second.text_).map((t: { id: string }) => t.id)).toEqual(ids.slice(2));
    expect(second.headers.get('link')).toContain('rel="first"');
    expect(second.headers.get('link')).not.toContain('rel="next"');

    const all = await app.request('GET', `${base()}?per_page=100`, { headers: headersOf(c.owner) });
    expect(JSON.parse(all.text_)).toHaveLength(3);
    expect(all.headers.get('link')).toBeNull();
  });

  it.each(['per_page=0', 'per_page=101', 'page=0', 'page=x'])('refuses %s', async (query) => {
    const res = await app.request('GET', `${base()}?${query}`, { headers: headersOf(c.owner) });
    expect(res.status).toBe(400);
  });
});
