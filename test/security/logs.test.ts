/**
 * Secrets never reach the log (issue 8): room passwords (at creation, change and start, right or
 * wrong), call-in pins, streaming keys, ID and access tokens, invite codes (in bodies and in
 * `Authorization`), signaling tickets and resumption tokens (in bodies and in the WebSocket
 * handshake), calendar feed tokens (in the feed's URL). The service runs with its own logger at `trace`, so every request is logged; the
 * test reads what it wrote after driving each of these through the API, and first makes sure the
 * requests were logged at all (a log that stayed empty would hide nothing).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startLoggedApp, type LoggedApp } from '../support/logged-app.js';
import { freshSource, post, signalingConfig } from '../support/signaling.js';
import { connect } from '../support/signaling-client.js';
import type { TestUser } from '../support/test-app.js';

const app = {} as LoggedApp;
let owner: TestUser, invitee: TestUser;
/** Every secret sent or answered so far, by what it is. */
const secrets = new Map<string, string>();
/** Every path requested, to find in the log. */
const requested = new Set<string>();

const secret = (what: string, value = `${what.replace(/\W+/g, '-')}-${randomBytes(12).toString('base64url')}`) => {
  secrets.set(what, value);
  return value;
};

/** A raw request from an address of its own (failed guesses never add up); `authorization` is the whole header. */
async function send(method: string, path: string, { authorization, body }: { authorization?: string; body?: unknown } = {}) {
  requested.add(path.split('?')[0]!);
  const res = await app.request(method, path, {
    headers: {
      'x-forwarded-for': freshSource(),
      ...(authorization ? { authorization } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = res.headers.get('content-type')?.startsWith('application/json') && res.text_ ? JSON.parse(res.text_) : undefined;
  return { status: res.status, json };
}

const bearer = (user: TestUser) => `Bearer ${user.accessToken}`;

beforeAll(async () => {
  // no [turn] servers: GET /turn fails with a 500, which the service logs as an error
  Object.assign(app, await startLoggedApp({ ...signalingConfig(), call_in: { tel: '+49 30 1234567' } }));
  [owner, invitee] = [await app.login('owner'), await app.login('invitee')];
  for (const user of [owner, invitee]) {
    secret(`${user.name}'s ID token`, user.idToken);
    secret(`${user.name}'s access token`, user.accessToken);
  }
});
afterAll(() => app.close?.());

describe('the log', () => {
  let roomId: string;
  let eventRoomId: string;
  let inviteCode: string;

  beforeAll(async () => {
    const room = await send('POST', '/v1/rooms', { authorization: bearer(owner), body: { password: secret('room password at creation'), enable_sip: true } });
    expect(room.status).toBe(201);
    roomId = room.json.id;
    expect((await send('PATCH', `/v1/rooms/${roomId}`, { authorization: bearer(owner), body: { password: secret('room password') } })).status).toBe(200);
    const tooLong = secret('room password over the limit', `Z${randomBytes(200).toString('hex')}`);
    expect((await send('PATCH', `/v1/rooms/${roomId}`, { authorization: bearer(owner), body: { password: tooLong } })).status).toBe(400);

    const event = await send('POST', '/v1/events?suppress_email_notification=true', {
      authorization: bearer(owner),
      body: { title: 'Planning', description: '', is_time_independent: true, password: secret('event room password at creation') },
    });
    expect(event.status).toBe(201);
    eventRoomId = event.json.room.id;
    const eventPatch = await send('PATCH', `/v1/events/${event.json.id}?suppress_email_notification=true`, {
      authorization: bearer(owner),
      body: { password: secret('event room password') },
    });
    expect(eventPatch.status).toBe(200);
    const invited = await send('POST', `/v1/events/${event.json.id}/invites?suppress_email_notification=true`, {
      authorization: bearer(owner),
      body: { invitee: invitee.id, role: 'user' },
    });
    expect(invited.status).toBe(201);

    const invite = await send('POST', `/v1/rooms/${roomId}/invites`, { authorization: bearer(owner), body: {} });
    inviteCode = secret('invite code', invite.json.invite_code);
  });

  it('logs every request (so that what it leaves out says something)', async () => {
    expect((await send('GET', '/v1/users/me', { authorization: bearer(owner) })).status).toBe(200);
    const entries = app
      .log()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const completed = entries.filter((entry) => entry.msg === 'request completed').map((entry) => entry.req.url.split('?')[0]);
    for (const path of requested) expect(completed, path).toContain(path);
  });

  it('keeps out call-in pins and the gateway token', async () => {
    const pin = secret('call-in pin', String(randomBytes(5).readUIntBE(0, 5) % 10_000_000_000).padStart(10, '0'));
    const sip = await send('PUT', `/v1/rooms/${roomId}/sip`, { authorization: bearer(owner), body: { password: pin } });
    expect(sip.status).toBe(200);
    const gateway = secret('gateway token', await app.issuer.serviceToken(['call-in']));
    const wrongPin = secret('wrong call-in pin', pin === '0000000000' ? '1111111111' : '0000000000');
    expect((await send('POST', '/v1/services/call_in/start', { authorization: `Bearer ${gateway}`, body: { id: sip.json.sip_id, pin } })).status).toBe(200);
    const wrong = await send('POST', '/v1/services/call_in/start', { authorization: `Bearer ${gateway}`, body: { id: sip.json.sip_id, pin: wrongPin } });
    expect(wrong.status).toBe(400);
    expect((await send('GET', `/v1/events?invitees_max=5`, { authorization: bearer(owner) })).status).toBe(200);
    expectNoSecretInLog();
  });

  it('keeps out streaming keys', async () => {
    const target = await send('POST', `/v1/rooms/${roomId}/streaming_targets`, {
      authorization: bearer(owner),
      body: {
        name: 'Channel',
        kind: 'custom',
        streaming_endpoint: 'rtmp://live.example.org/app',
        streaming_key: secret('streaming key'),
        public_url: 'https://video.example.org/channel',
      },
    });
    expect(target.status).toBe(201);
    const patch = await send('PATCH', `/v1/rooms/${roomId}/streaming_targets/${target.json.id}`, {
      authorization: bearer(owner),
      body: { streaming_key: secret('changed streaming key') },
    });
    expect(patch.status).toBe(200);
    expectNoSecretInLog();
  });

  it('keeps out invite codes, in bodies and in Authorization, also when the request fails with a 500', async () => {
    expect((await send('POST', '/v1/invite/verify', { body: { invite_code: inviteCode } })).status).toBe(201);
    expect((await send('GET', `/v1/rooms/${roomId}/event`, { authorization: `InviteCode ${inviteCode}` })).status).toBe(404);
    expect((await send('GET', `/v1/rooms/${roomId}/tariff`, { authorization: `InviteCode ${inviteCode}` })).status).toBe(200);
    expect((await send('GET', '/v1/turn', { authorization: `Bearer ${inviteCode}` })).status).toBe(500);
    expect(app.log()).toContain('"level":50'); // the 500 was logged as an error
    expectNoSecretInLog();
  });

  it('keeps out room passwords given to start, right or wrong, and the tickets and resumption tokens', async () => {
    const password = secrets.get('room password')!;
    const wrong = await post(app, `/v1/rooms/${eventRoomId}/start`, {
      token: invitee.accessToken,
      body: { password: secret('wrong room password') },
      source: freshSource(),
    });
    expect(wrong.status).toBe(401);
    const guest = await send('POST', `/v1/rooms/${roomId}/start_invited`, { body: { invite_code: inviteCode, password } });
    expect(guest.status).toBe(200);
    secret('guest ticket', guest.json.ticket);
    secret('guest resumption token', guest.json.resumption);
    const wrongGuest = await send('POST', `/v1/rooms/${roomId}/start_invited`, {
      body: { invite_code: inviteCode, password: secret("guest's wrong room password") },
    });
    expect(wrongGuest.status).toBe(401);

    const started = await send('POST', `/v1/rooms/${eventRoomId}/start`, {
      authorization: bearer(invitee),
      body: { password: secrets.get('event room password') },
    });
    expect(started.status).toBe(200);
    const ticket = secret('ticket', started.json.ticket);
    secret('resumption token', started.json.resumption);
    const client = await connect(app, ticket);
    client.command('control', 'join', { display_name: 'Ivy' });
    await client.next('control', 'join_success');
    await client.close();
    await expect(connect(app, ticket)).rejects.toThrow(/401/); // used up: refused, and logged as such if at all

    // the server lets go of the token once the closed session's departure is over: until then, session_running
    const resume = () =>
      send('POST', `/v1/rooms/${eventRoomId}/start`, {
        authorization: bearer(invitee),
        body: { password: secrets.get('event room password'), resumption: started.json.resumption },
      });
    let resumed = await resume();
    for (let attempt = 0; attempt < 100 && resumed.status === 400 && resumed.json.code === 'session_running'; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      resumed = await resume();
    }
    expect(resumed.status).toBe(200);
    secret('resumed ticket', resumed.json.ticket);
    secret('next resumption token', resumed.json.resumption);
    expectNoSecretInLog();
  });

  it('keeps out calendar feed tokens, which travel in the feed URL, right, rotated or unknown', async () => {
    const tokenOf = (url: string) => new URL(url).pathname.split('/')[3]!;
    const first = await send('POST', '/v1/users/me/calendar_feed', { authorization: bearer(owner) });
    expect(first.status).toBe(201);
    const feed = secret('calendar feed token', tokenOf(first.json.url));
    expect((await send('GET', `/v1/calendar_feeds/${feed}/meetings.ics`)).status).toBe(200);
    const rotated = await send('POST', '/v1/users/me/calendar_feed', { authorization: bearer(owner) });
    secret('rotated calendar feed token', tokenOf(rotated.json.url));
    expect((await send('GET', `/v1/calendar_feeds/${feed}/meetings.ics`)).status).toBe(404);
    const unknown = secret('unknown calendar feed token', randomBytes(32).toString('base64url'));
    expect((await send('GET', `/v1/calendar_feeds/${unknown}/meetings.ics`)).status).toBe(404);
    expect(app.log()).toContain('/v1/calendar_feeds/<feed token>/meetings.ics');
    expectNoSecretInLog();
  });
});

function expectNoSecretInLog(): void {
  const log = app.log();
  expect(log.length).toBeGreaterThan(0);
  const found = [...secrets].filter(([, value]) => log.includes(value)).map(([what]) => what);
  expect(found, 'secrets found in the log').toEqual([]);
}
