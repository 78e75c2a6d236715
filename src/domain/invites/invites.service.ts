/**
 * Room invite codes (the contract Room invites): the room's owner creates,
 * re-times and deactivates them; the owner and the invitees of the room's event may read them; a
 * stranger gets 404 as if the room did not exist. Anyone holding an active, unexpired code may
 * verify it (brute-force limited) and act as a guest of its room.
 */

import type { Db, RoomInviteRow } from '../../db/schema.js';
import { errors } from '../../errors.js';
import { systemClock, type Clock } from '../clock.js';
import { guardAttempt, type RateLimiter } from '../rate-limit/rate-limiter.js';
import { requireRoomAccess, requireRoomOwner } from '../rooms/room-access.js';
import { isBannedFromRoom } from '../rooms/room-bans.repository.js';
import { instant } from '../time/instants.js';
import { profilesOf } from '../events/events.repository.js';
import type { Page, PageRequest } from '../paging.js';
import type { User } from '../users/user.js';
import { inviteAttemptKeys, isInviteCodeFormat } from './invite-code.js';
import { toRoomInvite, type InviteVerifyResult, type RoomInvite } from './invite-view.js';
import * as repository from './invites.repository.js';

export type { InviteVerifyResult, RoomInvite } from './invite-view.js';

/** An invite code that currently admits its holder to a room. */
export interface ValidInvite {
  code: string;
  roomId: string;
  /** Whether the room has a password the guest must still supply. */
  passwordRequired: boolean;
}

export interface InviteService {
  list(caller: User, roomId: string, page: PageRequest): Promise<Page<RoomInvite>>;
  /** `expiration` null or undefined: the code never expires. */
  create(caller: User, roomId: string, expiration: string | null | undefined): Promise<RoomInvite>;
  get(caller: User, roomId: string, code: string): Promise<RoomInvite>;
  setExpiration(caller: User, roomId: string, code: string, expiration: string | null): Promise<RoomInvite>;
  /** Soft delete: the code stays listed but never admits anyone again. */
  deactivate(caller: User, roomId: string, code: string): Promise<RoomInvite>;
  /**
   * 404 for an unknown, inactive or expired code; failures count against `source` and the code (429
   * when over). `presentedUserId`: the user whose access token came along, if any; 404 when banned from the room.
   */
  verify(code: string, source: string, presentedUserId?: string): Promise<InviteVerifyResult>;
  /** The invite behind a code if it is active and unexpired now; undefined otherwise (also for a non-UUID). */
  findValidInvite(code: string): Promise<ValidInvite | undefined>;
  /**
   * `findValidInvite` for a guest presenting a code (`Authorization: InviteCode <code>`): a failure
   * counts against `source` like one of `verify` (429 when over the limit, before the lookup).
   */
  admitGuest(code: string, source: string): Promise<ValidInvite | undefined>;
}

export interface InviteServiceDeps {
  db: Db;
  rateLimiter: RateLimiter;
  clock?: Clock;
}

export function createInviteService({ db, rateLimiter, clock = systemClock }: InviteServiceDeps): InviteService {
  const now = () => new Date(clock());

  const views = async (rows: RoomInviteRow[]): Promise<RoomInvite[]> => {
    const profiles = await profilesOf(
      db,
      rows.flatMap((row) => [row.created_by, row.updated_by]),
    );
    return rows.map((row) => toRoomInvite(row, profiles));
  };
  const view = async (row: RoomInviteRow | undefined): Promise<RoomInvite> => {
    if (!row) throw errors.notFound();
    const [invite] = await views([row]);
    return invite!;
  };

  const findValidInvite = async (code: string): Promise<ValidInvite | undefined> => {
    if (!isInviteCodeFormat(code)) return undefined;
    const row = await repository.findValidInvite(db, code, now());
    return row && { code: row.code, roomId: row.room_id, passwordRequired: row.room_password !== null };
  };

  /** Every way of presenting a code counts its failures together: one budget per source for guessing codes. */
  const admitGuest = async (code: string, source: string): Promise<ValidInvite | undefined> => {
    const keys = inviteAttemptKeys(source, code);
    let invite: ValidInvite | undefined;
    await guardAttempt(rateLimiter, keys, async () => (invite = await findValidInvite(code)) !== undefined);
    return invite;
  };

  return {
    async list(caller, roomId, page) {
      await requireRoomAccess(db, caller.id, roomId);
      const { total, rows } = await repository.listRoomInvites(db, roomId, page);
      return { items: await views(rows), total };
    },

    async create(caller, roomId, expiration) {
      await requireRoomOwner(db, caller.id, roomId);
      const row = await repository.insertRoomInvite(db, {
        roomId,
        userId: caller.id,
        expiration: expiration == null ? null : instant(expiration, 'expiration'),
        now: now(),
      });
      return view(row);
    },

    async get(caller, roomId, code) {
      await requireRoomAccess(db, caller.id, roomId);
      return view(await repository.findRoomInvite(db, roomId, code));
    },

    async setExpiration(caller, roomId, code, expiration) {
      await requireRoomOwner(db, caller.id, roomId);
      const change = { expiration: expiration === null ? null : instant(expiration, 'expiration'), userId: caller.id, now: now() };
      return view(await repository.updateRoomInvite(db, roomId, code, change));
    },

    async deactivate(caller, roomId, code) {
      await requireRoomOwner(db, caller.id, roomId);
      return view(await repository.updateRoomInvite(db, roomId, code, { active: false, userId: caller.id, now: now() }));
    },

    async verify(code, source, presentedUserId) {
      const invite = await admitGuest(code, source);
      if (!invite) throw errors.notFound();
      // the same answer as an unknown code: a banned user learns nothing of the room
      if (presentedUserId !== undefined && (await isBannedFromRoom(db, invite.roomId, presentedUserId))) throw errors.notFound();
      return { room_id: invite.roomId, password_required: invite.passwordRequired };
    },

    findValidInvite,
    admitGuest,
  };
}
