/**
 * The three ways into a room's signaling (interface-spec §4.2 "Signaling tickets", design.md §6):
 *   - a registered user with access to the room (owner, or invitee of its event);
 *   - a guest holding an active, unexpired invite code of the room;
 *   - a call-in gateway presenting the room's call-in id and pin.
 * Every guessable secret (room password, invite code, call-in pin) is checked behind the rate
 * limiter, per source address and per target, and compared in constant time.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { AppError, errors } from '../../http/errors.js';
import type { SignalingStore } from '../../signaling/store/signaling-store.js';
import { systemClock, type Clock } from '../clock.js';
import { isInviteCodeFormat } from '../invites/invite-code.js';
import { findValidInvite } from '../invites/invites.repository.js';
import { attemptKeys, guardAttempt, type RateLimiter } from '../rate-limit/rate-limiter.js';
import { requireRoomAccess } from '../rooms/room-access.js';
import { isBannedFromRoom, findSipConfigByCallInId } from './start.repository.js';
import { secretsEqual } from './secrets.js';
import type { TicketCaps } from './ticket-caps.js';
import { issueTicket, type IssuedTicket } from './ticket-issuer.js';

export interface StartOptions {
  /** Only null (or absent) is accepted: Convene has no breakout rooms. */
  breakout_room?: number | string | null;
  resumption?: string;
}

export interface StartService {
  startAsUser(userId: string, roomId: string, request: StartOptions & { password?: string }, source: string): Promise<IssuedTicket>;
  startAsGuest(roomId: string, request: StartOptions & { invite_code: string; password?: string }, source: string): Promise<IssuedTicket>;
  startCallIn(request: { id: string; pin: string }, source: string): Promise<IssuedTicket>;
}

export interface StartServiceDeps {
  db: Kysely<DB>;
  signalingStore: SignalingStore;
  rateLimiter: RateLimiter;
  /** How many tickets a user, an invite code and an address may have per window. */
  ticketCaps: TicketCaps;
  clock?: Clock;
}

/** A 401 names a challenge (RFC 9110 §15.5.2, as every other 401 here): the credential wanted is the room's password. */
const wrongRoomPassword = () =>
  new AppError(401, 'wrong_room_password', 'The room password is missing or wrong', { headers: { 'www-authenticate': 'RoomPassword' } });
const invalidCallInCredentials = () =>
  errors.badRequest('invalid_credentials', 'The given call-in id and pin combination is not valid');
/** Compared against when the call-in id is unknown, so that both failures take the same time. */
const NO_PIN = '\u0000no-pin';

export function createStartService({ db, signalingStore, rateLimiter, ticketCaps, clock = systemClock }: StartServiceDeps): StartService {
  /** A room password check counted against the caller's address and the room. */
  const requirePassword = async (roomId: string, expected: string, given: string | undefined, source: string) => {
    const correct = await guardAttempt(rateLimiter, attemptKeys('pw', source, roomId), () =>
      given !== undefined && secretsEqual(given, expected),
    );
    if (!correct) throw wrongRoomPassword();
  };

  return {
    // room ids arrive in lower case: the HTTP edge canonicalises path uuids
    async startAsUser(userId, roomId, request, source) {
      const access = await requireRoomAccess(db, userId, roomId);
      // a banned invitee learns nothing more than a stranger (no 403 in the contract)
      if (access.kind !== 'owner' && (await isBannedFromRoom(db, roomId, userId))) throw errors.notFound();
      if (access.kind !== 'owner' && access.room.password !== null) {
        await requirePassword(roomId, access.room.password, request.password, source);
      }
      rejectBreakoutRoom(request.breakout_room);
      const who = { kind: 'user', userId } as const;
      await ticketCaps.take(who, source);
      return issueTicket(signalingStore, { roomId, who, resumption: request.resumption });
    },

    async startAsGuest(roomId, request, source) {
      let invite: { room_password: string | null } | undefined;
      const validInvite = await guardAttempt(rateLimiter, attemptKeys('invite', source, roomId), async () => {
        const found = isInviteCodeFormat(request.invite_code)
          ? await findValidInvite(db, request.invite_code, new Date(clock()))
          : undefined;
        invite = found?.room_id === roomId ? found : undefined; // a code of another room opens nothing here
        return invite !== undefined;
      });
      if (!validInvite || !invite) throw errors.notFound();
      if (invite.room_password !== null) await requirePassword(roomId, invite.room_password, request.password, source);
      rejectBreakoutRoom(request.breakout_room);
      const who = { kind: 'guest', inviteCode: request.invite_code.toLowerCase() } as const;
      await ticketCaps.take(who, source);
      return issueTicket(signalingStore, { roomId, who, resumption: request.resumption });
    },

    async startCallIn(request, source) {
      let roomId: string | undefined;
      const valid = await guardAttempt(rateLimiter, attemptKeys('pin', source, request.id), async () => {
        const sip = await findSipConfigByCallInId(db, request.id);
        roomId = sip?.room_id;
        return secretsEqual(request.pin, sip?.password ?? NO_PIN) && sip !== undefined;
      });
      if (!valid || !roomId) throw invalidCallInCredentials();
      // a gateway has no session to resume: every call is a new participant
      return issueTicket(signalingStore, { roomId, who: { kind: 'sip', sipId: request.id } });
    },
  };
}

function rejectBreakoutRoom(breakoutRoom: StartOptions['breakout_room']): void {
  if (breakoutRoom !== undefined && breakoutRoom !== null) {
    throw errors.badRequest('invalid_breakout_room_id', 'This room has no breakout rooms');
  }
}
