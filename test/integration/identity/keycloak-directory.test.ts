import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createKeycloakDirectory, keycloakDirectoryFromConfig } from '../../../src/domain/identity/keycloak-directory.js';
import { startKeycloakAdminStandIn } from '../../support/keycloak-admin-stand-in.js';
import type { KeycloakAdminStandIn } from '../../support/keycloak-admin-stand-in.js';
import { asHttp } from '../../support/http-errors.js';

let keycloak: KeycloakAdminStandIn;
beforeAll(async () => {
  keycloak = await startKeycloakAdminStandIn({
    clientId: 'convene-admin',
    clientSecret: 's3cret',
    users: [
      { username: 'ada', email: 'ada@example.test', firstName: 'Ada', lastName: 'Lovelace' },
      { username: 'alan', email: 'alan@example.test', firstName: 'Alan', lastName: 'Turing' },
      { username: 'grace', email: 'grace@example.test', firstName: 'Grace' },
      { username: 'adalbert' }, // no email: cannot be invited, so not returned
    ],
  });
});
afterAll(() => keycloak.close());

const directoryFor = (clientSecret = 's3cret') =>
  createKeycloakDirectory({ adminApiUrl: keycloak.adminApiUrl, tokenEndpoint: keycloak.tokenEndpoint, clientId: 'convene-admin', clientSecret });

describe('Keycloak user directory', () => {
  it('finds users by name or email, without the ones lacking an email', async () => {
    const directory = directoryFor();
    expect(await directory.search('ada', 10)).toEqual([{ email: 'ada@example.test', firstname: 'Ada', lastname: 'Lovelace' }]);
    expect(await directory.search('TURING', 10)).toEqual([{ email: 'alan@example.test', firstname: 'Alan', lastname: 'Turing' }]);
    expect(await directory.search('grace@', 10)).toEqual([{ email: 'grace@example.test', firstname: 'Grace', lastname: '' }]);
    expect(await directory.search('example.test', 2)).toHaveLength(2);
    expect(await directory.search('nobody', 10)).toEqual([]);
  });

  it('reuses its service-account token, and fetches a new one once it is revoked', async () => {
    const directory = directoryFor();
    const before = keycloak.requests.token;
    await Promise.all([directory.search('a', 5), directory.search('b', 5), directory.search('c', 5)]);
    expect(keycloak.requests.token - before).toBe(1);
    keycloak.revokeTokens();
    expect(await directory.search('alan', 5)).toHaveLength(1);
    expect(keycloak.requests.token - before).toBe(2);
  });

  it('answers 503 identity_directory_unavailable on a wrong secret, an admin API failure or an unreachable host', async () => {
    await expect(asHttp(directoryFor('wrong').search('ada', 5))).rejects.toMatchObject({ status: 503, code: 'identity_directory_unavailable' });
    const directory = directoryFor();
    keycloak.failUsersWith = 500;
    try {
      await expect(asHttp(directory.search('ada', 5))).rejects.toMatchObject({ status: 503, code: 'identity_directory_unavailable' });
    } finally {
      keycloak.failUsersWith = undefined;
    }
    const unreachable = createKeycloakDirectory({
      adminApiUrl: 'http://127.0.0.1:1/admin/realms/test',
      tokenEndpoint: 'http://127.0.0.1:1/token',
      clientId: 'x',
      clientSecret: 'y',
    });
    await expect(asHttp(unreachable.search('ada', 5))).rejects.toMatchObject({ status: 503 });
  });

  it('is built from [oidc] settings, deriving the token endpoint from the issuer', async () => {
    const oidc = {
      issuer: keycloak.issuer,
      admin_api_url: keycloak.adminApiUrl,
      admin_client_id: 'convene-admin',
      admin_client_secret: 's3cret',
      client_id: 'convene',
      service_roles_claim: 'realm_access.roles',
      call_in_role: 'call-in',
      provider_name: 'Keycloak',
    };
    expect(await keycloakDirectoryFromConfig({ oidc }).search('ada', 5)).toHaveLength(1);
    expect(() => keycloakDirectoryFromConfig({ oidc: { ...oidc, admin_client_secret: undefined } })).toThrow(/admin_client_secret/);
  });
});
