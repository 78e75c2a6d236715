/**
 * `Cache-Control: no-store` (issue 22): answers carrying room passwords, call-in pins, tickets,
 * resumption tokens, invite codes, streaming keys or TURN passwords must not be kept by a browser or
 * a shared cache. Every answer of an operation carries it (errors too); the contract declares it on
 * each success answer that carries one of those fields, which the first test derives from the
 * contract's schemas. The reference's static files (/docs) stay cacheable.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { openapiDocument } from '../../../generated/openapi-document.js';
import { operations } from '../../../generated/operations.js';
import { insertInvite, insertRoom, insertSipConfig, post, startCallIn, startInvited, startRoom } from '../../support/signaling.js';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const app = useTestApp({
  http: { trust_proxy: 1 },
  turn: { servers: [{ uris: ['turn:127.0.0.1:3478'], shared_secret: 'turn-secret' }] },
});
let alice: TestUser;
let roomId: string;
beforeEach(async () => {
  alice = await app.login('alice'); // the database is emptied before each test
  roomId = await insertRoom(app, alice, 'room-password');
});

const doc = openapiDocument as any;
const SECRET_FIELDS = new Set(['password', 'ticket', 'resumption', 'invite_code', 'streaming_key']);

/** The schema names a value refers to, followed through every `$ref`. */
function schemasUnder(value: unknown, seen = new Set<string>()): Set<string> {
  if (value && typeof value === 'object') {
    const ref = (value as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
      const name = ref.split('/').pop()!;
      if (!seen.has(name)) {
        seen.add(name);
        schemasUnder(doc.components.schemas[name], seen);
      }
    }
    for (const child of Object.values(value)) schemasUnder(child, seen);
  }
  return seen;
}

const noStore = (res: { headers: Headers }) => res.headers.get('cache-control');

describe('the contract', () => {
  it('declares Cache-Control on every success answer whose body carries a secret', () => {
    const undeclared: string[] = [];
    let declared = 0;
    for (const [id, { method, path }] of Object.entries(operations)) {
      for (const [status, response] of Object.entries<any>(doc.paths[path][method].responses)) {
        if (!status.startsWith('2')) continue;
        const carries = [...schemasUnder(response.content ?? {})].some((name) =>
          Object.keys(doc.components.schemas[name]?.properties ?? {}).some((field) => SECRET_FIELDS.has(field)),
        );
        if (!carries) continue;
        if (response.headers?.['Cache-Control']?.$ref === '#/components/headers/CacheControl') declared++;
        else undeclared.push(`${id} ${status}`);
      }
    }
    expect(undeclared).toEqual([]);
    expect(declared).toBeGreaterThan(20);
    expect(doc.components.headers.CacheControl.schema.const).toBe('no-store');
  });
});

describe('Cache-Control: no-store', () => {
  it('is on the tickets of all three start operations', async () => {
    const asUser = await startRoom(app, roomId, { token: alice.accessToken, body: {} });
    expect(asUser.status).toBe(200);
    expect(noStore(asUser)).toBe('no-store');
    const code = await insertInvite(app, roomId, alice);
    const asGuest = await startInvited(app, roomId, { invite_code: code, password: 'room-password' });
    expect(asGuest.status).toBe(200);
    expect(noStore(asGuest)).toBe('no-store');
    const sip = await insertSipConfig(app, roomId);
    const asCaller = await startCallIn(app, await app.issuer.serviceToken(['call-in']), { id: sip.id, pin: sip.pin });
    expect(asCaller.status).toBe(200);
    expect(noStore(asCaller)).toBe('no-store');
  });

  it('is on a room with its password, an invite code, a streaming key and a call-in pin as they are created', async () => {
    const token = alice.accessToken;
    const room = await post(app, '/v1/rooms', { token, body: { password: 'secret-password', enable_sip: true, waiting_room: false } });
    expect(room.status).toBe(201);
    expect(noStore(room)).toBe('no-store');
    const invite = await post(app, `/v1/rooms/${roomId}/invites`, { token, body: {} });
    expect(invite.status).toBe(200);
    expect(noStore(invite)).toBe('no-store');
    const target = await post(app, `/v1/rooms/${roomId}/streaming_targets`, {
      token,
      body: {
        kind: 'custom',
        name: 'Stream',
        streaming_endpoint: 'rtmp://127.0.0.1/live',
        streaming_key: 'stream-key',
        public_url: 'https://example.test/live',
      },
    });
    expect(target.status, JSON.stringify(target.body)).toBe(201);
    expect(noStore(target)).toBe('no-store');
    const sip = await app.request('PUT', `/v1/rooms/${roomId}/sip`, {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"lobby":false}',
    });
    expect(sip.status, sip.text_).toBeLessThan(300);
    expect(noStore(sip)).toBe('no-store');
  });

  it('is on every GET operation of the contract, whatever it answers', async () => {
    const gets = Object.entries(operations).filter(([, op]) => op.method === 'get');
    const server = (path: string) => String(doc.paths[path].servers?.[0]?.url ?? '/v1').replace(/\/$/, '');
    for (const [id, { path }] of gets) {
      const concrete = path.replace(/\{[^}]+\}/g, (m) =>
        m === '{instance_id}' ? '20260101T100000Z' : m === '{room_id}' ? roomId : '6f1c1f0e-8d0f-4b8e-9e55-0c5a2b8a1f00',
      );
      const res = await fetch(`${app.url}${server(path)}${concrete}`, { headers: { authorization: `Bearer ${alice.accessToken}` } });
      await res.arrayBuffer();
      expect(noStore(res), `${id} (${res.status})`).toBe('no-store');
    }
  });

  it('is on errors, and not on the static files of /docs', async () => {
    const refused = await startRoom(app, roomId, { body: {} });
    expect(refused.status).toBe(401);
    expect(noStore(refused)).toBe('no-store');
    const css = await fetch(`${app.url}/docs/swagger-ui.css`);
    await css.arrayBuffer();
    expect(noStore(css)).not.toBe('no-store');
  });
});
