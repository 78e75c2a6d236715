/**
 * The invite service over a real database with a clock the test moves: the exact expiry edge
 * (`expiration <= now` is expired), timestamps from the clock, the rate limit window ending, and
 * malformed codes refused before any query.
 */
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';

import type { DB } from '../../../src/db/schema.js';
import { createInviteService } from '../../../src/domain/invites/invites.service.js';
import { createLocalRateLimiter } from '../../../src/domain/rate-limit/local-rate-limiter.js';
import { registerUser, rejection, userServiceFor, useUsersTestDatabase } from '../../support/users.js';

const db = useUsersTestDatabase();
const START = Date.UTC(2026, 10, 22, 9, 0, 0);
const WINDOW_S = 60;

async function setUp() {
  let now = START;
  const clock = () => now;
  const limiter = createLocalRateLimiter({ windowSeconds: WINDOW_S, failuresPerSource: 2, failuresPerTarget: 100 }, clock);
  const invites = createInviteService({ db: db(), rateLimiter: limiter, clock });
  const owner = await registerUser(userServiceFor(db()));
  const room = await db().insertInto('rooms').values({ created_by: owner.id }).returning('id').executeTakeFirstOrThrow();
  return { invites, owner, roomId: room.id, advance: (ms: number) => (now += ms) };
}

describe('invite expiry', () => {
  it('admits until the millisecond before the expiration, and not at it', async () => {
    const { invites, owner, roomId, advance } = await setUp();
    const expiration = new Date(START + 10_000).toISOString();
    const invite = await invites.create(owner, roomId, expiration);
    advance(9_999);
    expect(await invites.findValidInvite(invite.invite_code)).toEqual({ code: invite.invite_code, roomId, passwordRequired: false });
    expect(await invites.verify(invite.invite_code, 'a')).toEqual({ room_id: roomId, password_required: false });
    advance(1);
    expect(await invites.findValidInvite(invite.invite_code)).toBeUndefined();
    expect((await rejection(invites.verify(invite.invite_code, 'b'))).status).toBe(404);
  });

  it('admits again after the owner moves the expiration later or clears it', async () => {
    const { invites, owner, roomId, advance } = await setUp();
    const invite = await invites.create(owner, roomId, new Date(START + 1_000).toISOString());
    advance(5_000);
    expect(await invites.findValidInvite(invite.invite_code)).toBeUndefined();
    await invites.setExpiration(owner, roomId, invite.invite_code, null);
    expect(await invites.findValidInvite(invite.invite_code)).toBeDefined();
  });

  it('stamps created and updated with the clock', async () => {
    const { invites, owner, roomId, advance } = await setUp();
    const invite = await invites.create(owner, roomId, undefined);
    expect(invite.created).toBe(new Date(START).toISOString());
    advance(30_000);
    const updated = await invites.setExpiration(owner, roomId, invite.invite_code, new Date(START + 3_600_000).toISOString());
    expect(updated.created).toBe(new Date(START).toISOString());
    expect(updated.updated).toBe(new Date(START + 30_000).toISOString());
    advance(30_000);
    expect((await invites.deactivate(owner, roomId, invite.invite_code)).updated).toBe(new Date(START + 60_000).toISOString());
  });
});

describe('verification limits', () => {
  it('lets a refused source try again once its window has passed', async () => {
    const { invites, owner, roomId, advance } = await setUp();
    const valid = await invites.create(owner, roomId, undefined);
    for (let i = 0; i < 2; i++) expect((await rejection(invites.verify(crypto.randomUUID(), 'src'))).status).toBe(404);
    const refused = await rejection(invites.verify(valid.invite_code, 'src'));
    expect(refused.status).toBe(429);
    expect(refused.headers?.['retry-after']).toBe(String(WINDOW_S));
    advance(WINDOW_S * 1000 - 1);
    expect((await rejection(invites.verify(valid.invite_code, 'src'))).headers?.['retry-after']).toBe('1');
    advance(1);
    expect(await invites.verify(valid.invite_code, 'src')).toEqual({ room_id: roomId, password_required: false });
  });
});

describe('malformed codes', () => {
  it('are no invite, decided before any query', async () => {
    const untouchable = new Proxy(
      {},
      {
        get() {
          throw new Error('the database was queried');
        },
      },
    ) as Kysely<DB>;
    const limiter = createLocalRateLimiter({ windowSeconds: 60, failuresPerSource: 10, failuresPerTarget: 10 });
    const invites = createInviteService({ db: untouchable, rateLimiter: limiter });
    for (const code of ['', 'x', '6f2d8a41-7c3e-4b95-9e1a-2c4d6b8f0e1', '6f2d8a41-7c3e-4b95-9e1a-2c4d6b8f0e13 ', 'zf2d8a41-7c3e-4b95-9e1a-2c4d6b8f0e13']) {
      expect(await invites.findValidInvite(code)).toBeUndefined();
    }
  });
});
