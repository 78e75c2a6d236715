/**
 * TURN credentials per the TURN REST API (draft-uberti-behave-turn-rest-00), which coturn checks
 * with `use-auth-secret` (docs/decisions.md):
 *
 * - `username` = `<expiry>:<opaque id>`: the expiry in Unix seconds, then 16 random bytes in
 *   base64url, so the server learns nothing about who asked;
 * - `password` = base64(HMAC-SHA1(the server's shared secret, username));
 * - `ttl` = the same expiry as a decimal string (the reference's clients read it as a time, not a
 *   duration).
 *
 * Every configured server is answered, each with a password of its own secret. The reference picked
 * two random servers of three or more (and, by a bug, always the first of two); handing out all of
 * them lets ICE find the best relay itself, and a deployment rarely configures more than a few.
 */
import { createHmac, randomBytes } from 'node:crypto';

import type { components } from '../../../generated/openapi.js';
import type { Config } from '../../config/schema.js';
import { errors } from '../../errors.js';
import { systemClock, type Clock } from '../clock.js';

export type TurnServerCredentials = components['schemas']['TurnServer'];

export interface TurnCredentialOptions {
  clock?: Clock;
  /** The opaque part of the username; random unless a test fixes it. */
  opaqueId?: () => string;
}

export const randomOpaqueId = (): string => randomBytes(16).toString('base64url');

export function turnPassword(sharedSecret: string, username: string): string {
  return createHmac('sha1', sharedSecret).update(username).digest('base64');
}

/** 500 `turn_not_configured` when `[turn]` names no server (the contract). */
export function turnCredentials(turn: Config['turn'], { clock = systemClock, opaqueId = randomOpaqueId }: TurnCredentialOptions = {}): TurnServerCredentials[] {
  if (turn.servers.length === 0) throw errors.turnNotConfigured();
  const expiry = String(Math.floor(clock() / 1000) + turn.lifetime);
  const username = `${expiry}:${opaqueId()}`;
  return turn.servers.map((server) => ({
    username,
    password: turnPassword(server.shared_secret, username),
    ttl: expiry,
    uris: [...server.uris],
  }));
}
