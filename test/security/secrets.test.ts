/**
 * Tokens and secrets (issue 8): tickets, resumption tokens, call-in ids and pins come from the
 * CSPRNG of node:crypto, and room passwords and pins are compared in constant time.
 *
 * Both are shown through the running service, not by reading its source: node:crypto's generators
 * and the service's comparison are wrapped in spies that pass through to the real ones, and the
 * tests steer what the generators answer (every ticket character then comes out as the byte
 * dictates) or see which comparison each start request made. A ticket drawn from Math.random, or
 * a password compared with `===`, fails them. Invite codes are node:crypto's randomUUID, for room
 * invites and for the codes that e-mail invitations to an event carry.
 */
import * as crypto from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi, type Mock } from 'vitest';

import { secretsEqual } from '../../src/domain/tickets/secrets.js';
import {
  TOKEN_SHAPE,
  insertInvite,
  insertRoom,
  insertSipConfig,
  inviteToRoomEvent,
  redeem,
  startCallIn,
  startInvited,
  startRoom,
  signalingConfig,
} from '../support/signaling.js';
import { useTestApp, type TestUser } from '../support/test-app.js';

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, randomBytes: vi.fn(actual.randomBytes), randomInt: vi.fn(actual.randomInt), randomUUID: vi.fn(actual.randomUUID) };
});
vi.mock('../../src/domain/tickets/secrets.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/domain/tickets/secrets.js')>();
  return { secretsEqual: vi.fn(actual.secretsEqual) };
});

// the spies' overloads are node's; these tests call them one way only
const randomBytes = crypto.randomBytes as unknown as Mock<(size: number) => Buffer>;
const randomInt = crypto.randomInt as unknown as Mock<(max: number) => number>;
const randomUUID = crypto.randomUUID as unknown as Mock<() => string>;
const compared = vi.mocked(secretsEqual);

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

// one user takes 100 tickets in a row below (the ticket caps have tests of their own)
const app = useTestApp({ ...signalingConfig(), signaling_caps: { tickets_per_user: 1000 } });
let owner: TestUser, invitee: TestUser;
let roomId: string;

beforeEach(async () => {
  [owner, invitee] = await Promise.all([app.login('owner'), app.login('invitee')]);
  roomId = await insertRoom(app, owner, 'correct-horse');
  await inviteToRoomEvent(app, roomId, owner, invitee);
  compared.mockClear();
});
// back to the real generators (the implementations the spies were made with)
afterEach(() => {
  randomBytes.mockReset();
  randomInt.mockReset();
  randomUUID.mockReset();
});

describe('signaling tickets and resumption tokens', () => {
  it("are the CSPRNG's bytes: each character is the alphabet at byte % 62, bytes from 248 up skipped", async () => {
    // one character per run, so that two runs sharing a Redis never hold the same ticket
    const index = crypto.randomInt(62);
    let calls = 0;
    // first a draw of 248s (the smallest byte dropped), then of the character's largest byte kept (186 to 247)
    randomBytes.mockImplementation((size: number) => Buffer.alloc(size, ++calls === 1 ? 248 : 186 + index));

    const res = await startRoom(app, roomId, { token: owner.accessToken });
    expect(res.status).toBe(200);
    const expected = ALPHABET[index]!.repeat(64);
    expect(res.body).toEqual({ ticket: expected, resumption: expected });
    expect(calls).toBeGreaterThanOrEqual(3); // the first draw, all 248 or more, gave nothing
    await redeem(app, res.body.ticket);
  });

  it('differ on every start, ticket from resumption, in the shape of 64 alphanumerics', async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const res = await startRoom(app, roomId, { token: owner.accessToken });
      expect(res.status).toBe(200);
      expect(res.body.ticket).toMatch(TOKEN_SHAPE);
      expect(res.body.resumption).toMatch(TOKEN_SHAPE);
      tokens.add(res.body.ticket).add(res.body.resumption);
      await redeem(app, res.body.ticket);
    }
    expect(tokens.size).toBe(200);
  });
});

describe('call-in ids and pins', () => {
  it('are ten draws each of randomInt(10) from node:crypto', async () => {
    const answers = [...'01234567899876543210'].map(Number);
    const draws: number[] = [];
    randomInt.mockImplementation((max: number) => answers[draws.push(max) - 1]!);
    const res = await app.request('PUT', `/v1/rooms/${roomId}/sip`, {
      headers: { authorization: `Bearer ${owner.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ lobby: false }),
    });
    expect(res.status, res.text_).toBe(201);
    expect(draws).toEqual(Array(20).fill(10));
    const { sip_id, password } = JSON.parse(res.text_);
    expect([sip_id, password].sort()).toEqual(['0123456789', '9876543210']);
  });
});

describe('invite codes', () => {
  it('are version 4 UUIDs, all different', async () => {
    const codes = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const res = await app.request('POST', `/v1/rooms/${roomId}/invites`, {
        headers: { authorization: `Bearer ${owner.accessToken}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.status).toBe(200);
      codes.add(JSON.parse(res.text_).invite_code);
    }
    expect(codes.size).toBe(100);
    for (const code of codes) expect(code).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("are the CSPRNG's: a room invite's code is what node:crypto's randomUUID drew", async () => {
    const drawn = crypto.webcrypto.getRandomValues(new Uint8Array(6)).reduce((hex, byte) => hex + byte.toString(16).padStart(2, '0'), '');
    const steered = `00000000-0000-4000-8000-${drawn}`;
    randomUUID.mockImplementation(() => steered);
    const res = await app.request('POST', `/v1/rooms/${roomId}/invites`, {
      headers: { authorization: `Bearer ${owner.accessToken}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text_).invite_code).toBe(steered);
  });
});

describe('secrets are compared in constant time', () => {
  it("compares a room password given to start_room with the room's, right or wrong, whatever its length", async () => {
    for (const given of ['correct-horse', 'wrong', 'x'.repeat(200)]) {
      compared.mockClear();
      const res = await startRoom(app, roomId, { token: invitee.accessToken, body: { password: given } });
      expect(res.status).toBe(given === 'correct-horse' ? 200 : 401);
      expect(compared.mock.calls).toEqual([[given, 'correct-horse']]);
    }
  });

  it("compares the password a guest gives to start_invited_room with the room's", async () => {
    const code = await insertInvite(app, roomId, owner);
    for (const given of ['correct-horse', 'correct-hors']) {
      compared.mockClear();
      const res = await startInvited(app, roomId, { invite_code: code, password: given });
      expect(res.status).toBe(given === 'correct-horse' ? 200 : 401);
      expect(compared.mock.calls).toEqual([[given, 'correct-horse']]);
    }
  });

  it("compares a call-in pin with the room's, and with a stand-in when the id is unknown, so both take as long", async () => {
    const sip = await insertSipConfig(app, roomId);
    const gateway = await app.issuer.serviceToken(['call-in']);
    const wrongPin = sip.pin === '0000000000' ? '1111111111' : '0000000000';
    const unknownId = sip.id === '0000000000' ? '1111111111' : '0000000000';
    const cases = [
      { id: sip.id, pin: sip.pin, status: 200, against: sip.pin },
      { id: sip.id, pin: wrongPin, status: 400, against: sip.pin },
      { id: unknownId, pin: sip.pin, status: 400, against: expect.not.stringMatching(/^[0-9]{10}$/) },
    ];
    for (const { id, pin, status, against } of cases) {
      compared.mockClear();
      expect((await startCallIn(app, gateway, { id, pin })).status).toBe(status);
      expect(compared.mock.calls).toEqual([[pin, against]]);
    }
  });
});
