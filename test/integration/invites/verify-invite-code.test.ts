/**
 * `POST /invite/verify`: no authorization; an active, unexpired code answers 201 with its room and
 * whether the room has a password; anything else 404; failed verifications are limited per source
 * address and per code (429 with Retry-After). The app trusts X-Forwarded-For, so each test guesses
 * from an address of its own.
 */
import { beforeEach, describe, expect, it } from 'vitest';

import { useTestApp } from '../../support/test-app.js';
import { expectError, freshSourceAddress, insertInvite, jsonRequest, parties, type Parties } from '../../support/invites.js';

const FAILURES_PER_SOURCE = 3;
const FAILURES_PER_TARGET = 5;

const app = useTestApp({
  http: { trust_proxy: 1 },
  rate_limits: { window_seconds: 300, failures_per_source: FAILURES_PER_SOURCE, failures_per_target: FAILURES_PER_TARGET },
});
let p: Parties;
beforeEach(async () => {
  p = await parties(app);
});

const verify = (body: unknown, ip = freshSourceAddress(), token?: string) => app.request('POST', '/v1/invite/verify', jsonRequest({ ip, token }, body));

describe('verify_invite_code', () => {
  it('answers 201 with the room and password_required false for a room without a password', async () => {
    const code = await insertInvite(app, p.roomId, p.owner);
    const response = await verify({ invite_code: code });
    expect(response.status, response.text_).toBe(201);
    expect(JSON.parse(response.text_)).toEqual({ room_id: p.roomId, password_required: false });
  });

  it('says a password is required when the room has one', async () => {
    const guarded = await parties(app, { password: 'secret' });
    const code = await insertInvite(app, guarded.roomId, guarded.owner, { expiration: new Date(Date.now() + 60_000) });
    expect(JSON.parse((await verify({ invite_code: code })).text_)).toEqual({ room_id: guarded.roomId, password_required: true });
  });

  it('needs no authorization and ignores a token and unknown fields', async () => {
    const code = await insertInvite(app, p.roomId, p.owner);
    expect((await verify({ invite_code: code, extra: true }, undefined, 'not-a-token')).status).toBe(201);
  });

  it('is 404 for an unknown, an inactive and an expired code, and for text that is no UUID', async () => {
    const inactive = await insertInvite(app, p.roomId, p.owner, { active: false });
    const expired = await insertInvite(app, p.roomId, p.owner, { expiration: new Date(Date.now() - 1_000) });
    for (const code of [crypto.randomUUID(), inactive, expired, 'not-a-uuid', "'; drop table room_invites; --"]) {
      expectError(await verify({ invite_code: code }), 404, 'not_found');
    }
  });

  it('is 404 once the owner deleted the code through the API', async () => {
    const code = await insertInvite(app, p.roomId, p.owner);
    const deleted = await app.request('DELETE', `/v1/rooms/${p.roomId}/invites/${code}`, jsonRequest({ token: p.owner.accessToken }));
    expect(deleted.status).toBe(200);
    expectError(await verify({ invite_code: code }), 404, 'not_found');
  });

  it('takes a code of 128 characters (404) and refuses 129, an empty one, a missing one and malformed bodies', async () => {
    expectError(await verify({ invite_code: 'x'.repeat(128) }), 404, 'not_found');
    expectError(await verify({ invite_code: 'x'.repeat(129) }), 400, 'validation_failed');
    expectError(await verify({ invite_code: '' }), 400, 'validation_failed');
    expectError(await verify({}), 400, 'validation_failed');
    expectError(await verify({ invite_code: 42 }), 400, 'validation_failed');
    expectError(await verify('{"invite_code":'), 400, 'invalid_json');
    const wrongType = await app.request('POST', '/v1/invite/verify', { headers: { 'content-type': 'text/plain' }, body: 'x' });
    expectError(wrongType, 415, 'invalid_content_type');
  });
});

describe('brute-force limit of verify_invite_code', () => {
  it(`refuses a source after ${FAILURES_PER_SOURCE} failures with 429 and Retry-After, even for a valid code`, async () => {
    const ip = freshSourceAddress();
    const valid = await insertInvite(app, p.roomId, p.owner);
    for (let i = 0; i < FAILURES_PER_SOURCE; i++) expectError(await verify({ invite_code: crypto.randomUUID() }, ip), 404, 'not_found');
    const refused = await verify({ invite_code: valid }, ip);
    expectError(refused, 429, 'too_many_requests');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(300);
    // another source is not affected
    expect((await verify({ invite_code: valid })).status).toBe(201);
  });

  it('lets a source verify valid codes without limit, and a success does not clear its failures', async () => {
    const ip = freshSourceAddress();
    const valid = await insertInvite(app, p.roomId, p.owner);
    for (let i = 0; i < FAILURES_PER_SOURCE + 2; i++) expect((await verify({ invite_code: valid }, ip)).status).toBe(201);
    for (let i = 0; i < FAILURES_PER_SOURCE - 1; i++) {
      expectError(await verify({ invite_code: crypto.randomUUID() }, ip), 404, 'not_found');
      expect((await verify({ invite_code: valid }, ip)).status).toBe(201);
    }
    // the last allowed failure, then the limit holds although valid codes were verified in between
    expectError(await verify({ invite_code: crypto.randomUUID() }, ip), 404, 'not_found');
    expectError(await verify({ invite_code: valid }, ip), 429, 'too_many_requests');
  });

  it(`refuses a code after ${FAILURES_PER_TARGET} failed verifications from many sources`, async () => {
    const expired = await insertInvite(app, p.roomId, p.owner, { expiration: new Date(Date.now() - 1_000) });
    for (let i = 0; i < FAILURES_PER_TARGET; i++) expectError(await verify({ invite_code: expired }), 404, 'not_found');
    expectError(await verify({ invite_code: expired }), 429, 'too_many_requests');
  });

  it('counts the spellings of one code as one target', async () => {
    const expired = await insertInvite(app, p.roomId, p.owner, { expiration: new Date(Date.now() - 1_000) });
    const spelling = (i: number) => (i % 2 === 0 ? expired.toUpperCase() : expired);
    for (let i = 0; i < FAILURES_PER_TARGET; i++) expectError(await verify({ invite_code: spelling(i) }), 404, 'not_found');
    expectError(await verify({ invite_code: expired.toUpperCase() }), 429, 'too_many_requests');
  });

  it('does not count malformed requests (400) as failures', async () => {
    const ip = freshSourceAddress();
    for (let i = 0; i < FAILURES_PER_SOURCE + 1; i++) expectError(await verify({}, ip), 400, 'validation_failed');
    expectError(await verify({ invite_code: crypto.randomUUID() }, ip), 404, 'not_found');
  });
});
