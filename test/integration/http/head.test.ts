/**
 * HEAD is answered wherever GET is (RFC 9110 §9.3.2; issue 22): the same status and headers as the
 * GET, no body. Load balancers and uptime checks probe `/health` with HEAD; it was answered 405.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { openapiDocument } from '../../../generated/openapi-document.js';
import { operations } from '../../../generated/operations.js';
import { uploaded } from '../../support/assets.js';
import { insertRoom } from '../../support/room-content.js';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const app = useTestApp();
let alice: TestUser;
let roomId: string;
beforeEach(async () => {
  alice = await app.login('alice'); // the database is emptied before each test
  roomId = await insertRoom(app, alice);
});

const getOperations = Object.entries(operations).filter(([, op]) => op.method === 'get');
const server = (path: string) => String(openapiDocument.paths[path].servers?.[0]?.url ?? '/v1').replace(/\/$/, '');

async function both(path: string, headers: Record<string, string> = {}) {
  const get = await fetch(`${app.url}${path}`, { headers });
  const getBody = await get.arrayBuffer();
  const head = await fetch(`${app.url}${path}`, { method: 'HEAD', headers });
  const headBody = await head.arrayBuffer();
  return { get, getBody, head, headBody };
}

describe('HEAD', () => {
  it('answers /health as GET does, without a body', async () => {
    const { get, head, headBody } = await both('/health');
    expect(head.status).toBe(200);
    expect(headBody.byteLength).toBe(0);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
  });

  it.each(getOperations)('answers %s with the status of GET', async (_id, { path }) => {
    const concrete = path.replace(/\{[^}]+\}/g, (m) =>
      m === '{instance_id}' ? '20260101T100000Z' : m === '{room_id}' ? roomId : '6f1c1f0e-8d0f-4b8e-9e55-0c5a2b8a1f00',
    );
    const { get, head, headBody } = await both(`${server(path)}${concrete}`, { authorization: `Bearer ${alice.accessToken}` });
    expect(head.status).toBe(get.status);
    expect(headBody.byteLength).toBe(0);
  });

  it('is refused where GET is not allowed, and listed in Allow where it is', async () => {
    const onPost = await fetch(`${app.url}/v1/auth/login`, { method: 'HEAD' });
    expect(onPost.status).toBe(200); // GET /auth/login exists
    const noGet = await fetch(`${app.url}/v1/invite/verify`, { method: 'HEAD' });
    expect(noGet.status).toBe(405);
    expect(noGet.headers.get('allow')).toBe('POST');
    const wrong = await fetch(`${app.url}/v1/users/me`, { method: 'DELETE', headers: { authorization: `Bearer ${alice.accessToken}` } });
    expect(wrong.headers.get('allow')?.split(', ')).toEqual(expect.arrayContaining(['GET', 'HEAD', 'PATCH']));
  });

  it("answers an asset's headers without reading its file", async () => {
    const asset = await uploaded(app, alice, roomId, Buffer.alloc(4096, 1));
    const { get, getBody, head, headBody } = await both(`/v1/rooms/${roomId}/assets/${asset.id}`, { authorization: `Bearer ${alice.accessToken}` });
    expect(get.status).toBe(200);
    expect(getBody.byteLength).toBe(4096);
    expect(head.status).toBe(200);
    expect(headBody.byteLength).toBe(0);
    expect(head.headers.get('content-length')).toBe('4096');
    expect(head.headers.get('content-disposition')).toBe(get.headers.get('content-disposition'));
  });

  it('needs the credentials GET needs', async () => {
    const { get, head } = await both('/v1/users/me');
    expect(get.status).toBe(401);
    expect(head.status).toBe(401);
    expect(head.headers.get('www-authenticate')).toBe(get.headers.get('www-authenticate'));
  });
});
