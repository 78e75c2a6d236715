/**
 * The `x_grp` claim (the user's groups): which of its entries are taken
 * as group names, at the length limit's edge, and the development identity provider issuing it, so
 * that a developer (and `npm run dev-token -- <name> --group …`) can log users in with groups.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';

import { groupsFrom, identityClaimsFrom, MAX_GROUP_NAME, MAX_GROUPS } from '../../../src/domain/identity/claims.js';
import { createDevIdentityProvider } from '../../../src/domain/identity/dev-provider.js';
import { mintDevTokens } from '../../../src/domain/identity/dev-token.js';
import { createIdentity } from '../../../src/domain/identity/identity.js';

describe('groupsFrom', () => {
  it('takes the strings of an array, each once, in their order', () => {
    expect(groupsFrom(['/OpenTalk/OU/Backend', '/Role/Developer', '/OpenTalk/OU/Backend'])).toEqual(['/OpenTalk/OU/Backend', '/Role/Developer']);
  });

  it(`takes names of 1 to ${MAX_GROUP_NAME} characters, counted as code points, and leaves out the rest`, () => {
    const longest = '😀'.repeat(MAX_GROUP_NAME);
    expect(groupsFrom([longest, `${longest}x`, 'x'.repeat(MAX_GROUP_NAME + 1), '', 'a'])).toEqual([longest, 'a']);
  });

  it(`keeps the first ${MAX_GROUPS} distinct names of a claim of 100,000, what it leaves out not counting`, () => {
    const claim = ['/dup', '/dup', '', 7, ...Array.from({ length: 100_000 }, (_, i) => `/g${i}`)];
    const groups = groupsFrom(claim);
    expect(groups).toHaveLength(MAX_GROUPS);
    expect(groups).toEqual(['/dup', ...Array.from({ length: MAX_GROUPS - 1 }, (_, i) => `/g${i}`)]);
    expect(groupsFrom(Array.from({ length: MAX_GROUPS }, (_, i) => `/g${i}`))).toHaveLength(MAX_GROUPS);
  });

  it('leaves out a name PostgreSQL cannot store as it is: one holding NUL or a lone surrogate', () => {
    expect(groupsFrom(['/a\u0000b', '\u0000', '/x\ud800', '\udc00/y', '/ok 😀'])).toEqual(['/ok 😀']);
  });

  it('leaves out what is no string, and takes no groups from anything but an array', () => {
    expect(groupsFrom(['/dev', 7, null, { name: '/ops' }, ['/qa'], true])).toEqual(['/dev']);
    for (const claim of [undefined, null, '/dev', 7, { 0: '/dev' }]) expect(groupsFrom(claim)).toEqual([]);
  });

  it('maps the claim of a verified ID token', () => {
    const payload = { iss: 'https://idp.test', sub: 's', exp: 2_000_000_000, email: 'a@example.test' };
    expect(identityClaimsFrom({ ...payload, x_grp: ['/dev'] }).groups).toEqual(['/dev']);
    expect(identityClaimsFrom(payload).groups).toEqual([]);
  });
});

describe('the development identity provider', () => {
  it('issues x_grp in the ID and the access token when asked for groups, and none otherwise', async () => {
    const provider = await createDevIdentityProvider({ issuer: 'http://localhost:11311/dev-idp' });
    const tokens = await provider.issueTokens({ subject: 'dev-alice', email: 'alice@example.test', groups: ['/dev', '/ops'] });
    expect(decodeJwt(tokens.id_token).x_grp).toEqual(['/dev', '/ops']);
    expect(decodeJwt(tokens.access_token).x_grp).toEqual(['/dev', '/ops']);
    const plain = await provider.issueTokens({ subject: 'dev-bob', email: 'bob@example.test' });
    expect(decodeJwt(plain.id_token)).not.toHaveProperty('x_grp');
    expect(provider.discovery().claims_supported).toContain('x_grp');
  });

  it('mints dev-token tokens with the groups asked for, which the service reads as the user’s groups', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'convene-dev-groups-'));
    try {
      const config = {
        http: { port: 11311 },
        database: { data_dir: dir, in_memory: false },
        oidc: { client_id: 'convene', service_roles_claim: 'realm_access.roles', call_in_role: 'call-in', provider_name: 'Dev' },
        dev: { identity_provider: true },
        tariffs: {},
      };
      const output = await mintDevTokens(config, { name: 'alice', groups: ['/dev'] });
      const identity = await createIdentity(config);
      await expect(identity.verifyIdToken(output.id_token!)).resolves.toMatchObject({ subject: 'dev-alice', groups: ['/dev'] });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
