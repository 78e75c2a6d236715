/**
 * The invite-code part of `resolveCaller`: which header and security combinations make a guest,
 * and that an invite code never reaches the identity provider (a guest's UUID is not a JWT).
 */
import { describe, expect, it } from 'vitest';

import type { Identity } from '../../../src/domain/identity/identity.js';
import type { User, UserService } from '../../../src/domain/users/users.service.js';
import { resolveCaller, type AuthDeps, type SecurityRequirement } from '../../../src/http/auth.js';
import { DomainError, errors } from '../../../src/errors.js';
import { httpError, type HttpError } from '../../../src/http/errors.js';

const CODE = '6f2d8a41-7c3e-4b95-9e1a-2c4d6b8f0e13';
const ROOM = '9c1e7f4a-3b2d-4e8f-a1c6-5d7b9e0f2a34';
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2ln';
const USER = { id: 'u1' } as User;

const TURN: SecurityRequirement[] = [{ BearerAuth: [] }, { InviteCode: [] }];
const USERS_ONLY: SecurityRequirement[] = [{ BearerAuth: [] }];

function fakeDeps(validCodes: string[] = [CODE]) {
  const calls = { accessTokens: [] as string[], inviteLookups: [] as string[] };
  const deps: AuthDeps = {
    identity: {
      async verifyAccessToken(token: string) {
        calls.accessTokens.push(token);
        if (token !== JWT) throw errors.unauthorized();
        return { issuer: 'https://idp.test', subject: 'ada', expires_at: new Date(Date.now() + 60_000) };
      },
    } as unknown as Identity,
    users: { authenticate: async () => USER } as unknown as UserService,
    callInRole: 'call-in',
    invites: {
      async admitGuest(code: string) {
        calls.inviteLookups.push(code);
        return validCodes.includes(code) ? { code, roomId: ROOM } : undefined;
      },
    },
  };
  return { deps, calls };
}

async function rejection(promise: Promise<unknown>): Promise<HttpError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(DomainError);
  return httpError(error as DomainError);
}

describe('resolveCaller with invite codes', () => {
  it('makes a guest of `InviteCode <code>` (scheme in any case) without asking the identity provider', async () => {
    for (const scheme of ['InviteCode', 'invitecode', 'INVITECODE']) {
      const { deps, calls } = fakeDeps();
      expect(await resolveCaller(TURN, `${scheme} ${CODE}`, deps)).toEqual({ kind: 'guest', inviteCode: CODE, roomId: ROOM });
      expect(calls.accessTokens).toEqual([]);
    }
  });

  it('makes a guest of `Bearer <code>` where InviteCode is admitted, without asking the identity provider', async () => {
    const { deps, calls } = fakeDeps();
    expect(await resolveCaller(TURN, `Bearer ${CODE}`, deps)).toMatchObject({ kind: 'guest', roomId: ROOM });
    expect(calls.accessTokens).toEqual([]);
  });

  it('verifies a JWT-shaped Bearer value as an access token and never looks it up as a code', async () => {
    const { deps, calls } = fakeDeps();
    expect(await resolveCaller(TURN, `Bearer ${JWT}`, deps)).toEqual({ kind: 'user', user: USER });
    expect(calls).toEqual({ accessTokens: [JWT], inviteLookups: [] });
  });

  it('answers 401 for a code that is not valid, with either scheme', async () => {
    const { deps } = fakeDeps([]);
    for (const header of [`InviteCode ${CODE}`, `Bearer ${CODE}`, 'InviteCode not-a-code', 'Bearer not-a-code']) {
      expect((await rejection(resolveCaller(TURN, header, deps))).status).toBe(401);
    }
  });

  it('refuses invite codes where the operation admits only users, without looking them up', async () => {
    const { deps, calls } = fakeDeps();
    expect((await rejection(resolveCaller(USERS_ONLY, `InviteCode ${CODE}`, deps))).status).toBe(401);
    // a Bearer value there is an access token and nothing else
    expect((await rejection(resolveCaller(USERS_ONLY, `Bearer ${CODE}`, deps))).status).toBe(401);
    expect(calls).toEqual({ accessTokens: [CODE], inviteLookups: [] });
  });

  it('answers 401 for an InviteCode header without a code', async () => {
    const { deps, calls } = fakeDeps();
    for (const header of ['InviteCode', 'InviteCode   ']) expect((await rejection(resolveCaller(TURN, header, deps))).status).toBe(401);
    expect(calls.inviteLookups).toEqual([]);
  });
});
