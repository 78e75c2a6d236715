/** `POST /services/call_in/start`: a phone caller's ticket, asked for by a call-in gateway. */
import { beforeEach, describe, expect, it } from 'vitest';

import type { TestUser } from '../../support/test-app.js';
import { TOKEN_SHAPE, insertRoom, insertSipConfig, redeem, startCallIn, useSignalingApp } from '../../support/signaling.js';

const app = useSignalingApp();
let owner: TestUser;
let roomId: string;
let sip: { id: string; pin: string };
let gateway: string;

beforeEach(async () => {
  owner = await app.login('owner');
  roomId = await insertRoom(app, owner, 'the room password does not apply to callers');
  sip = await insertSipConfig(app, roomId);
  gateway = await app.issuer.serviceToken(['offline_access', 'call-in']);
});

describe('a gateway with the call-in role', () => {
  it("gets a SIP participant's ticket for the room of the id and pin", async () => {
    const res = await startCallIn(app, gateway, { id: sip.id, pin: sip.pin });
    expect(res.status).toBe(200);
    expect(res.body.ticket).toMatch(TOKEN_SHAPE);
    expect(res.body.resumption).toMatch(TOKEN_SHAPE);
    expect(await redeem(app, res.body.ticket)).toMatchObject({ roomId, who: { kind: 'sip', sipId: sip.id }, resuming: false });
  });

  it('gets 400 invalid_credentials for a wrong pin or an unknown id', async () => {
    const wrongPin = sip.pin === '0000000000' ? '1111111111' : '0000000000';
    const unknownId = sip.id === '9999999999' ? '9999999998' : '9999999999';
    for (const body of [
      { id: sip.id, pin: wrongPin },
      { id: sip.id, pin: sip.pin.slice(0, 9) },
      { id: unknownId, pin: sip.pin },
    ]) {
      const res = await startCallIn(app, gateway, body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_credentials');
    }
  });

  it('stops getting tickets when the room loses its SIP config', async () => {
    await app.convene.database.db.deleteFrom('sip_configs').where('room_id', '=', roomId).execute();
    expect((await startCallIn(app, gateway, { id: sip.id, pin: sip.pin })).body.code).toBe('invalid_credentials');
  });
});

describe('the body', () => {
  it.each([
    ['an id of 11 digits', { id: '01234567890', pin: '0123456789' }, 'id'],
    ['a pin of 11 digits', { id: '0123456789', pin: '01234567890' }, 'pin'],
    ['a non-numeric id', { id: '01234a', pin: '0123456789' }, 'id'],
    ['a non-numeric pin', { id: '0123456789', pin: '+123' }, 'pin'],
    ['an empty pin', { id: '0123456789', pin: '' }, 'pin'],
    ['a numeric (not string) id', { id: 123, pin: '0123456789' }, 'id'],
    ['no pin', { id: '0123456789' }, 'pin'],
    ['no id', { pin: '0123456789' }, 'id'],
  ])('refuses %s', async (_what, body, field) => {
    const res = await startCallIn(app, gateway, body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('takes id and pin of 10 digits (the edge of the limit)', async () => {
    expect(sip.id).toHaveLength(10);
    expect(sip.pin).toHaveLength(10);
    expect((await startCallIn(app, gateway, { id: sip.id, pin: sip.pin, caller: '+4930123' })).status).toBe(200);
  });

  it('must be JSON', async () => {
    expect((await startCallIn(app, gateway, '{"id": "1"')).body.code).toBe('invalid_json');
    expect((await startCallIn(app, gateway, undefined)).status).toBe(400);
  });
});

describe('who may ask', () => {
  it('answers 401 without a token, and to any token that is not a call-in service token', async () => {
    const body = { id: sip.id, pin: sip.pin };
    const tokens = [
      undefined,
      await app.issuer.serviceToken(['offline_access']),
      await app.issuer.serviceToken(['call-in'], { expiresIn: -600 }),
      owner.accessToken,
      await app.issuer.bad.foreignKey('access'),
      'not-a-jwt',
    ];
    for (const token of tokens) {
      const res = await startCallIn(app, token, body);
      expect(res.status, String(token)).toBe(401);
      expect(res.body.code).toBe('unauthorized');
    }
  });

  it('checks the token before the body', async () => {
    expect((await startCallIn(app, undefined, { id: 'x' })).status).toBe(401);
  });
});
