/**
 * `GET /turn` over HTTP: credentials per the TURN REST API for every configured server, for users
 * (access token) and guests (an active, unexpired invite code as `InviteCode <code>` or, as existing
 * clients send it, `Bearer <code>`); 500 `turn_not_configured` without servers.
 */
import { createHmac } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';

import type { components } from '../../../generated/openapi.js';
import { useTestApp } from '../../support/test-app.js';
import { expectError, freshSourceAddress, insertInvite, jsonRequest, parties, type Parties } from '../../support/invites.js';

type TurnServer = components['schemas']['TurnServer'];

const LIFETIME = 3600;
const SERVERS = [
  { uris: ['turn:turn-a.test:3478?transport=udp', 'turn:turn-a.test:3478?transport=tcp'], shared_secret: 'secret-a' },
  { uris: ['turns:turn-b.test:5349'], shared_secret: 'secret-b' },
];

// each request from an address of its own: failed invite codes count against their source
const app = useTestApp({ turn: { lifetime: LIFETIME, servers: SERVERS }, http: { trust_proxy: 1 } });
let p: Parties;
beforeEach(async () => {
  p = await parties(app);
});

const getTurn = (authorization?: string, on = app) => on.request('GET', '/v1/turn', jsonRequest({ authorization, ip: freshSourceAddress() }));

describe('get_turn_servers', () => {
  it('answers every configured server with TURN REST API credentials of its own secret', async () => {
    const before = Math.floor(Date.now() / 1000);
    const response = await getTurn(`Bearer ${p.owner.accessToken}`);
    const after = Math.floor(Date.now() / 1000);
    expect(response.status, response.text_).toBe(200);
    const servers = JSON.parse(response.text_) as TurnServer[];
    expect(servers.map((s) => s.uris)).toEqual(SERVERS.map((s) => s.uris));
    for (const [i, server] of servers.entries()) {
      const [expiry, opaque] = server.username.split(':');
      expect(Number(expiry)).toBeGreaterThanOrEqual(before + LIFETIME);
      expect(Number(expiry)).toBeLessThanOrEqual(after + LIFETIME);
      expect(server.ttl).toBe(expiry);
      // the opaque part names nobody: 16 random bytes, not the user's id or e-mail
      expect(opaque).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(server.username).not.toContain(p.owner.id);
      expect(server.password).toBe(createHmac('sha1', SERVERS[i]!.shared_secret).update(server.username).digest('base64'));
    }
  });

  it('hands out a new opaque id on every request', async () => {
    const first = JSON.parse((await getTurn(`Bearer ${p.owner.accessToken}`)).text_) as TurnServer[];
    const second = JSON.parse((await getTurn(`Bearer ${p.owner.accessToken}`)).text_) as TurnServer[];
    expect(first[0]!.username.split(':')[1]).not.toBe(second[0]!.username.split(':')[1]);
  });

  it('serves any logged-in user (owner, invitee and stranger alike) and refuses a missing or bad token with 401', async () => {
    for (const user of [p.owner, p.invitee, p.stranger]) expect((await getTurn(`Bearer ${user.accessToken}`)).status).toBe(200);
    expectError(await getTurn(), 401, 'unauthorized');
    expectError(await getTurn('Bearer a.b.c'), 401, 'unauthorized');
    expectError(await getTurn('Basic dXNlcjpwYXNz'), 401, 'unauthorized');
  });

  it('answers 500 turn_not_configured when no server is configured', async () => {
    const bare = await app.withConfig({ turn: { lifetime: LIFETIME, servers: [] } });
    try {
      expectError(await getTurn(`Bearer ${p.owner.accessToken}`, bare), 500, 'turn_not_configured');
    } finally {
      await bare.close();
    }
  });
});

describe('guests on get_turn_servers', () => {
  it('serves a guest with an active invite code, as InviteCode or as Bearer', async () => {
    const code = await insertInvite(app, p.roomId, p.owner, { expiration: new Date(Date.now() + 60_000) });
    for (const authorization of [`InviteCode ${code}`, `invitecode ${code}`, `Bearer ${code}`]) {
      const response = await getTurn(authorization);
      expect(response.status, `${authorization}: ${response.text_}`).toBe(200);
      expect(JSON.parse(response.text_)).toHaveLength(SERVERS.length);
    }
  });

  it('refuses an inactive, an expired, an unknown and a malformed code with 401', async () => {
    const inactive = await insertInvite(app, p.roomId, p.owner, { active: false });
    const expired = await insertInvite(app, p.roomId, p.owner, { expiration: new Date(Date.now() - 1_000) });
    for (const code of [inactive, expired, crypto.randomUUID(), 'not-a-uuid', `${crypto.randomUUID()}x`]) {
      for (const scheme of ['InviteCode', 'Bearer']) {
        const response = await getTurn(`${scheme} ${code}`);
        expectError(response, 401, 'unauthorized');
        expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
      }
    }
    expectError(await getTurn('InviteCode'), 401, 'unauthorized');
    expectError(await getTurn('InviteCode  '), 401, 'unauthorized');
  });

  it('stops serving a guest once the owner deletes the code', async () => {
    const code = await insertInvite(app, p.roomId, p.owner);
    expect((await getTurn(`InviteCode ${code}`)).status).toBe(200);
    const deleted = await app.request('DELETE', `/v1/rooms/${p.roomId}/invites/${code}`, jsonRequest({ authorization: `Bearer ${p.owner.accessToken}` }));
    expect(deleted.status).toBe(200);
    expectError(await getTurn(`InviteCode ${code}`), 401, 'unauthorized');
  });

  it('does not let an invite code into operations that admit only users', async () => {
    const code = await insertInvite(app, p.roomId, p.owner);
    for (const authorization of [`InviteCode ${code}`, `Bearer ${code}`]) {
      expectError(await app.request('GET', '/v1/users/me', jsonRequest({ authorization })), 401, 'unauthorized');
      expectError(await app.request('GET', `/v1/rooms/${p.roomId}/invites`, jsonRequest({ authorization })), 401, 'unauthorized');
    }
  });
});
