/**
 * A small stand-in for the two Keycloak endpoints Convene's user directory uses, as a real HTTP server
 * on 127.0.0.1 port 0: the realm's token endpoint (client_credentials only) and the admin API's
 * `GET /admin/realms/<realm>/users?search=&max=&briefRepresentation=` over a fixed list. It checks
 * the client secret and the bearer as Keycloak does, and counts requests.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInUser {
  username: string;
  email?: string;
  firstName?: string;
  lastName?: string;
}

export interface KeycloakAdminStandIn {
  /** `http://127.0.0.1:<port>/admin/realms/test` */
  readonly adminApiUrl: string;
  /** `http://127.0.0.1:<port>/realms/test`, whose token endpoint Keycloak derives as below. */
  readonly issuer: string;
  readonly tokenEndpoint: string;
  readonly requests: { token: number; users: number };
  /** Forget issued tokens, as a Keycloak restart or a revocation would. */
  revokeTokens(): void;
  /** When set, `/users` answers this status. */
  failUsersWith: number | undefined;
  close(): Promise<void>;
}

export async function startKeycloakAdminStandIn(options: {
  clientId: string;
  clientSecret: string;
  users: StandInUser[];
  tokenLifetimeSeconds?: number;
}): Promise<KeycloakAdminStandIn> {
  const tokens = new Map<string, number>(); // token → expiry (ms)
  const requests = { token: 0, users: 0 };
  const control: { failUsersWith: number | undefined } = { failUsersWith: undefined };
  const lifetime = options.tokenLifetimeSeconds ?? 300;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

    if (req.method === 'POST' && url.pathname === '/realms/test/protocol/openid-connect/token') {
      requests.token++;
      const form = new URLSearchParams(await bodyOf(req));
      if (form.get('grant_type') !== 'client_credentials') return send(400, { error: 'unsupported_grant_type' });
      if (form.get('client_id') !== options.clientId || form.get('client_secret') !== options.clientSecret) {
        return send(401, { error: 'invalid_client', error_description: 'Invalid client or Invalid client credentials' });
      }
      const token = randomBytes(24).toString('base64url');
      tokens.set(token, Date.now() + lifetime * 1000);
      return send(200, { access_token: token, expires_in: lifetime, token_type: 'Bearer', scope: 'profile email' });
    }

    if (req.method === 'GET' && url.pathname === '/admin/realms/test/users') {
      requests.users++;
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const expiry = bearer ? tokens.get(bearer) : undefined;
      if (!expiry || expiry <= Date.now()) return send(401, { error: 'HTTP 401 Unauthorized' });
      if (control.failUsersWith) return send(control.failUsersWith, { error: 'failure' });
      const search = (url.searchParams.get('search') ?? '').toLowerCase();
      const max = Number(url.searchParams.get('max') ?? '100');
      // Keycloak's `search` matches a substring of username, email, first or last name.
      const found = options.users.filter((user) =>
        [user.username, user.email, user.firstName, user.lastName].some((field) => field?.toLowerCase().includes(search)),
      );
      return send(
        200,
        found.slice(0, max).map((user, index) => ({ id: `id-${index}`, enabled: true, ...user })),
      );
    }

    send(404, { error: 'Not Found' });
  };
  // node:http ignores what a listener returns: the handler's promise is dropped as before, explicitly.
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    adminApiUrl: `${base}/admin/realms/test`,
    issuer: `${base}/realms/test`,
    tokenEndpoint: `${base}/realms/test/protocol/openid-connect/token`,
    requests,
    revokeTokens: () => tokens.clear(),
    get failUsersWith() {
      return control.failUsersWith;
    },
    set failUsersWith(status: number | undefined) {
      control.failUsersWith = status;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
