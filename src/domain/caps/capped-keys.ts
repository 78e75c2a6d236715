/**
 * The keys a participant's ticket or socket is counted under (`[signaling_caps]`): its registered
 * user or its invite code, and its source address. Call-in gateways are counted under none: one
 * gateway's address carries every phone caller, and its service token is a trusted credential.
 */
import type { ParticipantIdentity } from '../tickets/signaling-store.js';
import type { CappedKey } from './window-counter.js';

export interface CapLimits {
  perUser: number;
  perInviteCode: number;
  perSource: number;
}

export function cappedKeys(what: 'tickets' | 'sockets', who: ParticipantIdentity, source: string, limits: CapLimits): CappedKey[] {
  const bySource = { key: `${what}:src:${source}`, limit: limits.perSource };
  switch (who.kind) {
    case 'user':
      return [{ key: `${what}:user:${who.userId}`, limit: limits.perUser }, bySource];
    case 'guest':
      return [{ key: `${what}:code:${who.inviteCode}`, limit: limits.perInviteCode }, bySource];
    case 'sip':
      return [];
  }
}
