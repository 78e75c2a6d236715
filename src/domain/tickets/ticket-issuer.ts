/**
 * Issues a signaling ticket (docs/architecture.md §6): resolves the participant id (new, or taken over from a
 * resumable session), stores the ticket for 30 s and returns it with a fresh resumption token.
 */
import { randomUUID } from 'node:crypto';
import { errors } from '../../errors.js';
import type { ParticipantIdentity, SignalingStore, TicketData } from './signaling-store.js';
import { randomAlphanumeric } from './random-token.js';

export interface TicketRequest {
  roomId: string;
  who: ParticipantIdentity;
  /** A resumption token the caller presented, if any. */
  resumption?: string;
}

export interface IssuedTicket {
  ticket: string;
  resumption: string;
}

/** A collision of two 381-bit tokens does not happen; the retry only guards against a broken RNG looping. */
const MAX_PUT_ATTEMPTS = 3;

export async function issueTicket(store: SignalingStore, request: TicketRequest): Promise<IssuedTicket> {
  let participantId: string = randomUUID();
  let resuming = false;
  if (request.resumption) {
    const taken = await store.takeResumption(request.resumption, request.roomId, request.who);
    if (taken.outcome === 'running') {
      throw errors.sessionRunning();
    }
    if (taken.outcome === 'resumed') {
      participantId = taken.record.participantId;
      resuming = true;
    }
  }

  const resumption = randomAlphanumeric();
  const data: TicketData = { participantId, roomId: request.roomId, who: request.who, breakoutRoom: null, resumption, resuming };
  for (let attempt = 0; attempt < MAX_PUT_ATTEMPTS; attempt++) {
    const ticket = randomAlphanumeric();
    if (await store.putTicket(ticket, data)) return { ticket, resumption };
  }
  throw new Error(`no unused ticket after ${MAX_PUT_ATTEMPTS} attempts`);
}
