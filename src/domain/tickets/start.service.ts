/**
 * The three ways into a room's signaling (the contract "Signaling tickets", docs/architecture.md §6):
 *   - a registered user with access to the room (owner, or invitee of its event not banned from it);
 *   - a guest holding an active, unexpired invite code of the room, unless it presents the access
 *     token of a user banned from the room;
 *   - a call-in gateway presenting the room's call-in id and pin.
 * Every guessable secret (room password, invite code, call-in pin) is checked behind the rate
 * limiter and compared in constant time. The keys are chosen so that strangers' failures never
 * refuse the holder of a right secret (rate-limiter.ts): a room password per source address and per
 * room and asker (the account, or the invite code that got the guest this far); an invite code per
 * source and per code, as everywhere (invite-code.ts); a call-in pin per call-in id only.
 */
import type { Db } from '../../db/schema.js';
import { errors } from '../../errors.js';
import type { SignalingStore } from './signaling-store.js';
import { systemClock, type Clock } from '../clock.js';
import { inviteAttemptKeys, isInviteCodeFormat } from '../invites/invite-code.js';
import { findValidInvite } from '../invites/invites.repository.js';
import { guardAttempt, sourceKey, targetKey, type AttemptKey, type RateLimiter } from '../rate-limit/rate-limiter.js';
import { requireRoomAccess } from '../rooms/room-access.js';
import { isBannedFromRoom } from '../rooms/room-bans.repository.js';
import { findSipConfigByCallInId } from './start.repository.js';
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
  /** `presentedUserId`: the registered user whose access token came along, if any (auth.ts `presentedUser`). */
  startAsGuest(
    roomId: string,
    request: StartOptions & { invite_code: string; password?: string },
    source: string,
    presentedUserId?: string,
  ): Promise<IssuedTicket>;
  startCallIn(request: { id: string; pin: string }): Promise<IssuedTicket>;
}

export interface StartServiceDeps {
  db: Db;
  signalingStore: SignalingStore;
  rateLimiter: RateLimiter;
  /** How many tickets a user, an invite code and an address may have per window. */
  ticketCaps: TicketCaps;
  clock?: Clock;
}

/** Compared against when the call-in id is unknown, so that both failures take the same time. */
const NO_PIN = '\u0000no-pin';

/**
 * Who asks for a room's password: an account or the invite code that let a guest this far. Both
 * are credentials strangers do not have, so a room's budget per asker bounds a crowd of addresses
 * sharing one account or code, and is never used up by anyone else.
 */
type PasswordAsker = { userId: string } | { inviteCode: string };

function passwordKeys(roomId: string, asker: PasswordAsker, source: string): AttemptKey[] {
  const who = 'userId' in asker ? `user:${asker.userId}` : `code:${asker.inviteCode.toLowerCase()}`;
  return [sourceKey('pw', source), targetKey('pw', `${roomId}:${who}`)];
}

/**
 * A gateway's calls all come from its address, so a source key would let one caller's wrong pins
 * refuse every other caller's dial-in. The contract names no caller number to count per caller, so
 * the pins are counted per call-in id: wrong pins hold that id's dial-in at most, other rooms' never.
 */
const pinKeys = (callInId: string): AttemptKey[] => [targetKey('pin', callInId)];

export function createStartService({ db, signalingStore, rateLimiter, ticketCaps, clock = systemClock }: StartServiceDeps): StartService {
  /** A room password check counted against the caller's address and the room's budget for `asker`. */
  const requirePassword = async (roomId: string, asker: PasswordAsker, expected: string, given: string | undefined, source: string) => {
    const correct = await guardAttempt(rateLimiter, passwordKeys(roomId, asker, source), () => given !== undefined && secretsEqual(given, expected));
    if (!correct) throw errors.wrongRoomPassword();
  };

  return {
    // room ids arrive in lower case: the HTTP edge canonicalises path uuids
    async startAsUser(userId, roomId, request, source) {
      // a banned invitee has no access: it learns nothing more than a stranger (no 403 in the contract)
      const access = await requireRoomAccess(db, userId, roomId);
      if (access.kind !== 'owner' && access.room.password !== null) {
        await requirePassword(roomId, { userId }, access.room.password, request.password, source);
      }
      rejectBreakoutRoom(request.breakout_room);
      const who = { kind: 'user', userId } as const;
      await ticketCaps.take(who, source);
      return issueTicket(signalingStore, { roomId, who, resumption: request.resumption });
    },

    async startAsGuest(roomId, request, source, presentedUserId) {
      let invite: { room_id: string; room_password: string | null } | undefined;
      await guardAttempt(rateLimiter, inviteAttemptKeys(source, request.invite_code), async () => {
        invite = isInviteCodeFormat(request.invite_code) ? await findValidInvite(db, request.invite_code, new Date(clock())) : undefined;
        return invite !== undefined;
      });
      // a valid code of another room is no guess (its holder knows it is valid): refused, not counted
      if (invite?.room_id !== roomId) throw errors.notFound();
      // the same answer as a wrong code: a banned user learns nothing of the room
      if (presentedUserId !== undefined && (await isBannedFromRoom(db, roomId, presentedUserId))) throw errors.notFound();
      if (invite.room_password !== null) {
        await requirePassword(roomId, { inviteCode: request.invite_code }, invite.room_password, request.password, source);
      }
      rejectBreakoutRoom(request.breakout_room);
      const who = { kind: 'guest', inviteCode: request.invite_code.toLowerCase() } as const;
      await ticketCaps.take(who, source);
      return issueTicket(signalingStore, { roomId, who, resumption: request.resumption });
    },

    async startCallIn(request) {
      let roomId: string | undefined;
      const valid = await guardAttempt(rateLimiter, pinKeys(request.id), async () => {
        const sip = await findSipConfigByCallInId(db, request.id);
        roomId = sip?.room_id;
        return secretsEqual(request.pin, sip?.password ?? NO_PIN) && sip !== undefined;
      });
      if (!valid || !roomId) throw errors.invalidCredentials();
      // a gateway has no session to resume: every call is a new participant
      return issueTicket(signalingStore, { roomId, who: { kind: 'sip', sipId: request.id } });
    },
  };
}

function rejectBreakoutRoom(breakoutRoom: StartOptions['breakout_room']): void {
  if (breakoutRoom !== undefined && breakoutRoom !== null) {
    throw errors.invalidBreakoutRoomId();
  }
}
