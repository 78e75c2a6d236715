/**
 * Rooms and participants for the signaling integration tests: one instance for the test file (on
 * Redis when REDIS_URL is set), rooms of fresh owners written straight into the database, every
 * kind of participant (the owner, event invitees, invite-code guests, phone callers), and sockets
 * that are closed after each test.
 *
 *   const { room, join } = useSignalingRooms({ pair: { quotas: { room_participant_limit: 2 } } });
 *   const { moderator, guest } = await room({ tariff: 'pair' });
 *   const alice = await join(moderator, 'Alice');
 */
import { Redis } from 'ioredis';
import { afterEach, expect } from 'vitest';
import type { Config, TariffDefinition } from '../../src/config/schema.js';
import { redisUrl, dbOf, insertInvite, insertRoom, insertSipConfig, signalingConfig, startCallIn } from './signaling.js';
import { connect, joinRoom, startTicket, type SignalingClient, type Starter } from './signaling-client.js';
import { createEventFor } from './rooms.js';
import { useTestApp, type TestApp, type TestUser } from './test-app.js';

export interface RoomOptions {
  /** The owner's tariff (one of those given to `useSignalingRooms`). */
  tariff?: string;
  waitingRoom?: boolean;
}

export interface SignalingRoom {
  roomId: string;
  owner: TestUser;
  /** The owner's start: a moderator and the room owner each time. */
  moderator: Starter;
  /** A guest's start, with an invite code of the room. */
  guest: Starter;
  /** A fresh user invited to the room's event (created with the first invitee) in that role. */
  invitee(role: 'moderator' | 'user'): Promise<Starter>;
}

/**
 * The test file's app and its room helpers. `tariffs`: tariffs besides `default` (no limits), each
 * switching off nothing unless it says so. `media`: the `[media]` section (Janus servers).
 */
export function useSignalingRooms(
  tariffs: Record<string, Partial<TariffDefinition>> = {},
  caps: Partial<Config['signaling_caps']> = {},
  webhooks: Partial<Config['webhooks']> = {},
  media: Partial<Config['media']> = {},
) {
  const none: TariffDefinition = { quotas: {}, disabled_modules: [], disabled_features: [] };
  const definitions = Object.fromEntries(Object.entries({ default: none, ...tariffs }).map(([name, tariff]) => [name, { ...none, ...tariff }]));
  const app = useTestApp({ ...signalingConfig(), tariffs: { default: 'default', definitions }, signaling_caps: caps, webhooks, media });

  const clients: SignalingClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  /** The client, to be closed after the test. */
  const kept = <C extends SignalingClient>(client: C): C => {
    clients.push(client);
    return client;
  };

  // names are unique across the file: an instance caches a token's user for a while, and the
  // database is emptied between tests, so a reused name could still map to an earlier test's user
  let logins = 0;
  const login = (name: string) => app.login(`${name}${++logins}`);

  async function room(options: RoomOptions = {}): Promise<SignalingRoom> {
    const owner = await login('owner');
    const roomId = await insertRoom(app, owner);
    if (options.waitingRoom) await dbOf(app).updateTable('rooms').set({ waiting_room: true }).where('id', '=', roomId).execute();
    if (options.tariff) await dbOf(app).updateTable('users').set({ tariff_name: options.tariff }).where('id', '=', owner.id).execute();
    let event: Promise<string> | undefined;
    const eventId = () => (event ??= createEventFor(app, roomId, owner));
    return {
      roomId,
      owner,
      moderator: { roomId, token: owner.accessToken },
      guest: { roomId, inviteCode: await insertInvite(app, roomId, owner) },
      async invitee(role) {
        const user = await login(role);
        await dbOf(app)
          .insertInto('event_invites')
          .values({ event_id: await eventId(), invitee: user.id, created_by: owner.id, role })
          .execute();
        return { roomId, token: user.accessToken };
      },
    };
  }

  /** Opens a socket (not joined yet), keeping its resumption token. */
  async function open(starter: Starter) {
    const { ticket, resumption } = await startTicket(app, starter);
    return Object.assign(kept(await connect(app, ticket)), { resumption });
  }

  /**
   * Opens a socket resuming an earlier session, once that session has let go of its token: which
   * also tells that its departure (leaving the room, the waiting room) is over.
   */
  async function openResuming(starter: Starter, resumption: string) {
    for (let attempt = 0; ; attempt++) {
      try {
        return await open({ ...starter, resumption });
      } catch (err) {
        if (attempt === 100 || !String(err).includes('session_running')) throw err;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }

  /** Starts, connects, joins and waits for `join_success` (the client's `joinSuccess`), on `instance` if given. */
  const join = async (starter: Starter, name: string, instance: TestApp = app) => kept(await joinRoom(instance, starter, name));

  /** A phone caller's socket (not joined yet): a call-in gateway's ticket for the room's SIP id and pin. */
  async function callIn(roomId: string): Promise<SignalingClient> {
    const sip = await insertSipConfig(app, roomId);
    const gateway = await app.issuer.serviceToken(['offline_access', 'call-in']);
    const answer = await startCallIn(app, gateway, { id: sip.id, pin: sip.pin });
    expect(answer.status).toBe(200);
    return kept(await connect(app, answer.body.ticket));
  }

  return { app, login, room, open, openResuming, join, callIn };
}

/**
 * The room's keys in Redis (`convene:signaling:room:<roomId>:…`), once the server has had a moment
 * to finish the departures of closed sockets: polled until none is left or `ms` passed.
 */
export async function roomKeysLeft(roomId: string, ms = 3_000): Promise<string[]> {
  if (!redisUrl) throw new Error('roomKeysLeft needs REDIS_URL');
  const redis = new Redis(redisUrl);
  try {
    const deadline = Date.now() + ms;
    for (;;) {
      const keys = await redis.keys(`convene:signaling:room:${roomId}:*`);
      if (keys.length === 0 || Date.now() > deadline) return keys.sort();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await redis.quit();
  }
}
