import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';

import { randomOpaqueId, turnCredentials, turnPassword } from '../../../src/domain/turn/turn-credentials.js';
import { DomainError } from '../../../src/errors.js';
import { httpError } from '../../../src/http/errors.js';

const NOW_MS = Date.UTC(2026, 10, 22, 10, 0, 0, 999); // the milliseconds are dropped, not rounded up
const NOW_S = Math.floor(NOW_MS / 1000);
const fixed = { clock: () => NOW_MS, opaqueId: () => 'opaque' };

describe('turnPassword', () => {
  it('is base64 of HMAC-SHA1 (RFC 2202 test case 2)', () => {
    const expected = Buffer.from('effcdf6ae5eb2fa2d27416d5f184df9c259a7c79', 'hex').toString('base64');
    expect(turnPassword('Jefe', 'what do ya want for nothing?')).toBe(expected);
  });
});

describe('turnCredentials', () => {
  it('answers `<expiry>:<opaque id>`, the expiry as ttl, and the password of the server’s secret', () => {
    const [server] = turnCredentials({ lifetime: 86_400, servers: [{ uris: ['turn:a.test:3478'], shared_secret: 's3cret' }] }, fixed);
    const username = `${NOW_S + 86_400}:opaque`;
    expect(server).toEqual({
      username,
      password: createHmac('sha1', 's3cret').update(username).digest('base64'),
      ttl: String(NOW_S + 86_400),
      uris: ['turn:a.test:3478'],
    });
  });

  it('answers every server, in configured order, each signed with its own secret', () => {
    const servers = [
      { uris: ['turn:a.test:3478?transport=udp', 'turn:a.test:3478?transport=tcp'], shared_secret: 'one' },
      { uris: ['turns:b.test:5349'], shared_secret: 'two' },
      { uris: ['turn:c.test'], shared_secret: 'three' },
    ];
    const answer = turnCredentials({ lifetime: 1, servers }, fixed);
    expect(answer.map((s) => s.uris)).toEqual(servers.map((s) => s.uris));
    expect(answer.map((s) => s.password)).toEqual(servers.map((s) => turnPassword(s.shared_secret, `${NOW_S + 1}:opaque`)));
    expect(new Set(answer.map((s) => s.password)).size).toBe(3);
  });

  it('counts the lifetime from the clock', () => {
    const turn = { lifetime: 60, servers: [{ uris: ['turn:a.test'], shared_secret: 'x' }] };
    expect(turnCredentials(turn, { ...fixed, clock: () => NOW_MS + 5_000 })[0]!.ttl).toBe(String(NOW_S + 65));
  });

  it('is 500 turn_not_configured without servers', () => {
    let error: unknown;
    try {
      turnCredentials({ lifetime: 60, servers: [] }, fixed);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect(httpError(error as DomainError)).toMatchObject({ status: 500, code: 'turn_not_configured' });
  });
});

describe('randomOpaqueId', () => {
  it('is 16 random bytes in base64url', () => {
    const ids = Array.from({ length: 50 }, randomOpaqueId);
    for (const id of ids) expect(Buffer.from(id, 'base64url')).toHaveLength(16);
    expect(new Set(ids).size).toBe(50);
  });
});
