/**
 * What an invite code opens, end to end: the operations whose security admits `InviteCode` (the
 * room's tariff and event, TURN) for the code's own room only, while it is active and unexpired;
 * nothing that admits only users.
 */
import { beforeEach, describe, expect, it } from 'vitest';

import { useTestApp } from '../../support/test-app.js';
import { expectError, freshSourceAddress, insertInvite, insertRoom, jsonRequest, parties, type Parties } from '../../support/invites.js';

// each request from an address of its own: failed invite codes count against their source
const app = useTestApp({ http: { trust_proxy: 1 } });
let p: Parties;
beforeEach(async () => {
  p = await parties(app);
});

const asGuest = (method: string, path: string, code: string) =>
  app.request(method, path, jsonRequest({ authorization: `InviteCode ${code}`, ip: freshSourceAddress() }));

describe('a guest holding an invite code', () => {
  it('reads the tariff and the event of the code’s room', async () => {
    const code = await insertInvite(app, p.roomId, p.owner);
    expect((await asGuest('GET', `/v1/rooms/${p.roomId}/tariff`, code)).status).toBe(200);
    const event = await asGuest('GET', `/v1/rooms/${p.roomId}/event`, code);
    expect(event.status, event.text_).toBe(200);
    expect(JSON.parse(event.text_)).toMatchObject({ room_id: p.roomId, title: 'Planning' });
  });

  it('gets 404 for another room, as a stranger would', async () => {
    const code = await insertInvite(app, p.roomId, p.owner);
    const otherRoom = await insertRoom(app, p.owner);
    expectError(await asGuest('GET', `/v1/rooms/${otherRoom}/tariff`, code), 404, 'not_found');
    expectError(await asGuest('GET', `/v1/rooms/${otherRoom}/event`, code), 404, 'not_found');
  });

  it('gets 401 once the code expired or was deleted', async () => {
    const expired = await insertInvite(app, p.roomId, p.owner, { expiration: new Date(Date.now() - 1) });
    const inactive = await insertInvite(app, p.roomId, p.owner, { active: false });
    for (const code of [expired, inactive]) expectError(await asGuest('GET', `/v1/rooms/${p.roomId}/tariff`, code), 401, 'unauthorized');
  });

  it('gets 401 from operations that admit only users', async () => {
    const code = await insertInvite(app, p.roomId, p.owner);
    for (const [method, path] of [
      ['GET', `/v1/rooms/${p.roomId}`],
      ['GET', `/v1/rooms/${p.roomId}/invites`],
      ['GET', `/v1/rooms/${p.roomId}/invites/${code}`],
      ['DELETE', `/v1/rooms/${p.roomId}/invites/${code}`],
      ['GET', '/v1/users/me'],
    ] as const) {
      expectError(await asGuest(method, path, code), 401, 'unauthorized');
    }
  });
});
