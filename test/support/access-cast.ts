/**
 * The callers and scenes of the access table (test/security/access-table.test.ts).
 *
 * Callers: every kind the contract meets. The owner of a room and of its event, a moderator and a
 * user invited to the event, a user invited to the event and banned from its room (a moderator's
 * `ban`), a logged-in stranger, a guest holding the room's invite code (sent as `InviteCode <code>`,
 * or as `Bearer <code>` as existing clients do), nobody, and bearers of tokens
 * that must open nothing: the owner's token past its `exp`, a token of another issuer, one forged
 * in the issuer's name with another key, a gateway's service token, and tokens the issuer really
 * signed that are not Convene's access tokens: the owner's access token issued to another client
 * of the realm, the owner's ID token, and a service token with the call-in role issued to another
 * client.
 *
 * A scene is one event with its room and everything a room carries (a password, a SIP config with
 * a known pin, an invite code, a streaming target with a known key, optionally an asset and
 * favorites), made through the API as its owner; the invitations and the ban are written straight
 * into the database. Its secrets are the cast's, so that a test can look for them in any answer.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'vitest';

import { freshSourceAddress } from './invites.js';
import { startTestIssuer, type TestIssuer } from './oidc-issuer.js';
import { dbOf, type TestApp, type TestUser } from './test-app.js';

export const PARTIES = [
  'owner',
  'moderator',
  'invitee',
  'banned',
  'stranger',
  'guest',
  'guest_bearer',
  'anonymous',
  'expired',
  'other_issuer',
  'forged',
  'gateway',
  'other_client',
  'id_token',
  'other_client_gateway',
] as const;
export type Party = (typeof PARTIES)[number];

export interface Cast {
  owner: TestUser;
  /** Invited to every scene's event as a moderator. */
  moderator: TestUser;
  /** Invited to every scene's event as a user. */
  invitee: TestUser;
  /** Invited to every scene's event as a user, and banned from its room (`room_bans`). */
  banned: TestUser;
  stranger: TestUser;
  /** Invited as a user too: the one whose invitation the table changes and withdraws. */
  bystander: TestUser;
  /** Registered and invited nowhere: the one the table invites. */
  newcomer: TestUser;
  tokens: { expired: string; other_issuer: string; forged: string; gateway: string; other_client: string; id_token: string; other_client_gateway: string };
  secrets: { roomPassword: string; pin: string; streamingKey: string };
  /** The second issuer, whose tokens Convene does not trust. */
  otherIssuer: TestIssuer;
}

export async function createCast(app: TestApp): Promise<Cast> {
  const [owner, moderator, invitee, banned, stranger, bystander, newcomer] = await Promise.all(
    ['owner', 'moderator', 'invitee', 'banned', 'stranger', 'bystander', 'newcomer'].map((name) => app.login(name)),
  );
  const otherIssuer = await startTestIssuer({ clientId: 'convene' });
  const ownerSubject = { sub: `sub-${owner!.name}` };
  return {
    owner: owner!,
    moderator: moderator!,
    invitee: invitee!,
    banned: banned!,
    stranger: stranger!,
    bystander: bystander!,
    newcomer: newcomer!,
    tokens: {
      expired: await app.issuer.accessToken(ownerSubject, { expiresIn: -600 }),
      other_issuer: await otherIssuer.accessToken(ownerSubject),
      forged: await app.issuer.accessToken(ownerSubject, { foreignKey: true }),
      gateway: await app.issuer.serviceToken(['call-in']),
      other_client: await app.issuer.bad.otherClient('access', ownerSubject),
      id_token: owner!.idToken,
      other_client_gateway: await app.issuer.bad.otherClient('access', { sub: 'service-account-gateway', realm_access: { roles: ['call-in'] } }),
    },
    secrets: {
      roomPassword: `pw-${randomBytes(9).toString('base64url')}`,
      // a leading zero: no Unix time in seconds (TURN's ttl, 10 digits too) can be mistaken for it
      pin: '0481516234',
      streamingKey: `sk-${randomBytes(12).toString('base64url')}`,
    },
    otherIssuer,
  };
}

export interface Scene {
  roomId: string;
  eventId: string;
  /** The first occurrence of the weekly event. */
  instanceId: string;
  inviteCode: string;
  sipId: string;
  streamingTargetId: string;
  /** The owner's webhook subscription (to an event type the access table never causes: nothing is sent). */
  webhookSubscriptionId: string;
  assetId?: string;
}

export interface SceneOptions {
  /** Owner and both invitees have the event among their favorites. */
  favorites?: boolean;
  /** The room holds an uploaded asset. */
  asset?: boolean;
}

/** The `Authorization` header each party sends in a scene (none for the anonymous caller). */
export function authorizationOf(cast: Cast, scene: Scene, party: Party): string | undefined {
  switch (party) {
    case 'owner':
    case 'moderator':
    case 'invitee':
    case 'banned':
    case 'stranger':
      return `Bearer ${cast[party].accessToken}`;
    case 'guest':
      return `InviteCode ${scene.inviteCode}`;
    case 'guest_bearer':
      return `Bearer ${scene.inviteCode}`;
    case 'anonymous':
      return undefined;
    default:
      return `Bearer ${cast.tokens[party]}`;
  }
}

const FIRST_START = '2030-01-07T09:00:00Z';

/** A raw request of the scene's owner; the answer (checked against the contract) must have `status`. */
async function asOwner(app: TestApp, cast: Cast, method: string, path: string, status: number, body?: unknown): Promise<any> {
  const res = await app.request(method, `/v1${path}`, {
    headers: {
      authorization: `Bearer ${cast.owner.accessToken}`,
      'x-forwarded-for': freshSourceAddress(),
      ...(body === undefined ? {} : { 'content-type': Buffer.isBuffer(body) ? 'application/octet-stream' : 'application/json' }),
    },
    body: body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  expect(res.status, `${method} ${path}: ${res.text_}`).toBe(status);
  return res.text_ ? JSON.parse(res.text_) : undefined;
}

export async function createScene(app: TestApp, cast: Cast, options: SceneOptions = {}): Promise<Scene> {
  const event = await asOwner(app, cast, 'POST', '/events?suppress_email_notification=true', 201, {
    title: 'Board meeting',
    description: 'Quarterly figures.',
    password: cast.secrets.roomPassword,
    is_time_independent: false,
    is_all_day: false,
    starts_at: { datetime: FIRST_START, timezone: 'Europe/Berlin' },
    ends_at: { datetime: '2030-01-07T10:00:00Z', timezone: 'Europe/Berlin' },
    recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=3'],
  });
  const roomId: string = event.room.id;
  const eventId: string = event.id;
  const invitations = dbOf(app)
    .insertInto('event_invites')
    .values([
      { event_id: eventId, invitee: cast.moderator.id, role: 'moderator', created_by: cast.owner.id },
      { event_id: eventId, invitee: cast.invitee.id, role: 'user', created_by: cast.owner.id },
      { event_id: eventId, invitee: cast.bystander.id, role: 'user', created_by: cast.owner.id },
      { event_id: eventId, invitee: cast.banned.id, role: 'user', created_by: cast.owner.id },
    ])
    .execute()
    // as a moderator's `ban` writes it: the invitation stays, the ban overrides it
    .then(() => dbOf(app).insertInto('room_bans').values({ room_id: roomId, user_id: cast.banned.id, created_by: cast.owner.id }).execute());
  const [sip, invite, target, asset] = await Promise.all([
    // every event's room has a SIP config already: this sets its pin
    asOwner(app, cast, 'PUT', `/rooms/${roomId}/sip`, 200, { password: cast.secrets.pin }),
    asOwner(app, cast, 'POST', `/rooms/${roomId}/invites`, 200, {}),
    asOwner(app, cast, 'POST', `/rooms/${roomId}/streaming_targets`, 201, {
      name: 'Company channel',
      kind: 'custom',
      streaming_endpoint: 'rtmp://live.example.org/app',
      streaming_key: cast.secrets.streamingKey,
      public_url: 'https://video.example.org/company',
    }),
    options.asset ? asOwner(app, cast, 'POST', `/rooms/${roomId}/assets?filename=minutes.txt`, 201, Buffer.from('minutes')) : undefined,
    invitations,
  ]);
  const subscription = await dbOf(app)
    .insertInto('webhook_subscriptions')
    .values({ id: randomUUID(), owner: cast.owner.id, url: 'https://hooks.example.org/convene', secret: 'whsec_c2VjcmV0', event_types: ['timer.started'] })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (options.favorites) {
    await dbOf(app)
      .insertInto('event_favorites')
      .values([cast.owner, cast.moderator, cast.invitee, cast.banned].map((user) => ({ user_id: user.id, event_id: eventId })))
      .execute();
  }
  return {
    roomId,
    eventId,
    instanceId: FIRST_START.replace(/[-:]/g, ''),
    inviteCode: invite.invite_code,
    sipId: sip.sip_id,
    streamingTargetId: target.id,
    webhookSubscriptionId: subscription.id,
    ...(asset ? { assetId: asset.id } : {}),
  };
}
