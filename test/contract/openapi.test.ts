/**
 * The OpenAPI contract checks itself: every operation of the interface is present on its path with
 * its operationId, every operation follows the house rules (security, error answers, examples), and
 * every example validates against its own schema.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { openapiDocument as doc } from '../../generated/openapi-document.js';
import { operations } from '../../generated/operations.js';

// interface operation (the interface, docs/architecture.md §3, issue 2) → method, path, operationId
const INTERFACE: [string, string, string, string][] = [
  ['Login', 'post', '/auth/login', 'login'],
  ['OIDC provider discovery', 'get', '/auth/login', 'get_login_provider'],
  ['Get TURN server and credentials', 'get', '/turn', 'get_turn_servers'],
  ['Get accessible rooms', 'get', '/rooms', 'get_rooms'],
  ['Create room', 'post', '/rooms', 'create_room'],
  ['Get room', 'get', '/rooms/{room_id}', 'get_room'],
  ['Patch room', 'patch', '/rooms/{room_id}', 'patch_room'],
  ['Delete room', 'delete', '/rooms/{room_id}', 'delete_room'],
  ['Get room tariff', 'get', '/rooms/{room_id}/tariff', 'get_room_tariff'],
  ['Get room event info', 'get', '/rooms/{room_id}/event', 'get_room_event'],
  ['Start signaling session as registered user', 'post', '/rooms/{room_id}/start', 'start_room'],
  ['Start signaling session for an invite code', 'post', '/rooms/{room_id}/start_invited', 'start_invited_room'],
  ['Start signaling session from call-in id and pin', 'post', '/services/call_in/start', 'start_call_in'],
  ['Get all invites', 'get', '/rooms/{room_id}/invites', 'get_room_invites'],
  ['Create invite', 'post', '/rooms/{room_id}/invites', 'create_room_invite'],
  ['Get invite', 'get', '/rooms/{room_id}/invites/{invite_code}', 'get_room_invite'],
  ['Update invite', 'put', '/rooms/{room_id}/invites/{invite_code}', 'update_room_invite'],
  ['Delete invite', 'delete', '/rooms/{room_id}/invites/{invite_code}', 'delete_room_invite'],
  ['Verify invite code', 'post', '/invite/verify', 'verify_invite_code'],
  ['Get SIP config', 'get', '/rooms/{room_id}/sip', 'get_room_sip_config'],
  ['Create or modify SIP config', 'put', '/rooms/{room_id}/sip', 'put_room_sip_config'],
  ['Delete SIP config', 'delete', '/rooms/{room_id}/sip', 'delete_room_sip_config'],
  ['Get assets for a room', 'get', '/rooms/{room_id}/assets', 'get_room_assets'],
  ['Upload asset', 'post', '/rooms/{room_id}/assets', 'create_room_asset'],
  ['Get asset', 'get', '/rooms/{room_id}/assets/{asset_id}', 'get_room_asset'],
  ['Delete asset', 'delete', '/rooms/{room_id}/assets/{asset_id}', 'delete_room_asset'],
  ["Get the current user's assets (reference, 2024 web app)", 'get', '/users/me/assets', 'get_me_assets'],
  ['List streaming targets', 'get', '/rooms/{room_id}/streaming_targets', 'get_room_streaming_targets'],
  ['Create streaming target', 'post', '/rooms/{room_id}/streaming_targets', 'create_room_streaming_target'],
  ['Get streaming target', 'get', '/rooms/{room_id}/streaming_targets/{streaming_target_id}', 'get_room_streaming_target'],
  ['Update streaming target', 'patch', '/rooms/{room_id}/streaming_targets/{streaming_target_id}', 'patch_room_streaming_target'],
  ['Delete streaming target', 'delete', '/rooms/{room_id}/streaming_targets/{streaming_target_id}', 'delete_room_streaming_target'],
  ['Get events', 'get', '/events', 'get_events'],
  ['Create event', 'post', '/events', 'create_event'],
  ['Get event', 'get', '/events/{event_id}', 'get_event'],
  ['Update event or single occurrence', 'patch', '/events/{event_id}', 'patch_event'],
  ['Delete event', 'delete', '/events/{event_id}', 'delete_event'],
  ['Get instances of an event', 'get', '/events/{event_id}/instances', 'get_event_instances'],
  ['Get a single instance', 'get', '/events/{event_id}/instances/{instance_id}', 'get_event_instance'],
  ['Update a single instance', 'patch', '/events/{event_id}/instances/{instance_id}', 'patch_event_instance'],
  ['Favorite event', 'put', '/users/me/event_favorites/{event_id}', 'add_event_to_favorites'],
  ['Unfavorite event', 'delete', '/users/me/event_favorites/{event_id}', 'remove_event_from_favorites'],
  ['Create invite to an event', 'post', '/events/{event_id}/invites', 'create_event_invite'],
  ['Get invitees', 'get', '/events/{event_id}/invites', 'get_event_invites'],
  ['Update event invite', 'patch', '/events/{event_id}/invites/{user_id}', 'update_event_invite'],
  ['Delete event invite', 'delete', '/events/{event_id}/invites/{user_id}', 'delete_event_invite'],
  ['Delete email invite', 'delete', '/events/{event_id}/invites/email', 'delete_email_event_invite'],
  ['Accept event invite', 'patch', '/events/{event_id}/invite', 'accept_event_invite'],
  ['Decline event invite', 'delete', '/events/{event_id}/invite', 'decline_event_invite'],
  ['Get all users', 'get', '/users', 'get_users'],
  ['Read current user', 'get', '/users/me', 'get_me'],
  ['Patch current user', 'patch', '/users/me', 'patch_me'],
  ['Get current user tariff', 'get', '/users/me/tariff', 'get_my_tariff'],
  ['Get user details', 'get', '/users/{user_id}', 'get_user'],
  ['Find users', 'get', '/users/find', 'find_users'],
  ['Health', 'get', '/health', 'get_health'],
  // Convene's own (issue 20): a user's meetings as an iCalendar feed
  ['Get calendar feed (Convene)', 'get', '/users/me/calendar_feed', 'get_calendar_feed'],
  ['Issue calendar feed (Convene)', 'post', '/users/me/calendar_feed', 'issue_calendar_feed'],
  ['Revoke calendar feed (Convene)', 'delete', '/users/me/calendar_feed', 'revoke_calendar_feed'],
  ['Read calendar feed (Convene)', 'get', '/calendar_feeds/{token}/meetings.ics', 'get_calendar_feed_ics'],
  // Convene's own, beside the interface's: readiness for load balancers
  ['Ready', 'get', '/ready', 'get_ready'],
  // Convene's own (issue 20): webhook subscriptions and their delivery log
  ['List webhook subscriptions (Convene)', 'get', '/webhook_subscriptions', 'get_webhook_subscriptions'],
  ['Create webhook subscription (Convene)', 'post', '/webhook_subscriptions', 'create_webhook_subscription'],
  ['Get webhook subscription (Convene)', 'get', '/webhook_subscriptions/{subscription_id}', 'get_webhook_subscription'],
  ['Delete webhook subscription (Convene)', 'delete', '/webhook_subscriptions/{subscription_id}', 'delete_webhook_subscription'],
  ['Resume webhook subscription (Convene)', 'post', '/webhook_subscriptions/{subscription_id}/resume', 'resume_webhook_subscription'],
  ['List webhook deliveries (Convene)', 'get', '/webhook_subscriptions/{subscription_id}/deliveries', 'get_webhook_deliveries'],
];

const d = doc;
const resolve = (o: any): any => {
  while (o && typeof o.$ref === 'string')
    o = o.$ref
      .slice(2)
      .split('/')
      .reduce((x: any, k: string) => x?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], d);
  return o;
};

describe('interface operations', () => {
  it.each(INTERFACE)('%s is %s %s as %s', (_name, method, path, operationId) => {
    expect(d.paths[path]?.[method]?.operationId).toBe(operationId);
  });

  it('has no operation the table does not name', () => {
    expect(Object.keys(operations).sort()).toEqual(INTERFACE.map((r) => r[3]).sort());
  });

  it('serves /health and /ready outside /v1 and everything else under /v1', () => {
    expect(d.servers).toEqual([{ url: '/v1' }]);
    expect(d.paths['/health'].servers).toMatchObject([{ url: '/' }]);
    expect(d.paths['/ready'].servers).toMatchObject([{ url: '/' }]);
  });
});

describe('house rules', () => {
  const ops = Object.entries(operations).map(([id, o]) => [id, d.paths[o.path][o.method], d.paths[o.path]] as const);

  it.each(ops)('%s has a summary, a description, one tag and explicit security', (_id, op) => {
    expect(op.summary).toBeTruthy();
    expect(op.description).toBeTruthy();
    expect(op.tags).toHaveLength(1);
    expect(Array.isArray(op.security)).toBe(true);
  });

  it.each(ops)('%s declares the standard error answers', (id, op, item) => {
    const codes = Object.keys(op.responses);
    if (id !== 'get_health') expect(codes).toContain('400');
    expect(codes).toContain('500');
    expect(codes).toContain('503');
    if (op.security.length > 0) expect(codes).toContain('401');
    const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map(resolve);
    if (params.some((p: any) => p.in === 'path')) expect(codes).toContain('404');
    const body = resolve(op.requestBody);
    if (body?.content?.['application/json']) expect(codes).toEqual(expect.arrayContaining(['413', '415']));
    for (const [code, response] of Object.entries<any>(op.responses)) {
      if (Number(code) >= 400 && resolve(response).content) {
        expect(resolve(response).content['application/json'].schema.$ref, `${id} ${code}`).toBe(
          id === 'get_health' && code === '503' ? '#/components/schemas/Health' : '#/components/schemas/Error',
        );
      }
    }
  });

  it.each(ops)('%s: request schemas accept unknown fields', (_id, op) => {
    const schema = resolve(resolve(op.requestBody)?.content?.['application/json']?.schema);
    if (schema) expect(schema.additionalProperties).not.toBe(false);
  });
});

describe('examples', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(d, 'openapi.json');

  // every (example, schema) pair in the document, found by walking it
  const pairs: [string, string][] = [];
  const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');
  const walk = (node: any, path: string[]) => {
    if (!node || typeof node !== 'object') return;
    if ('example' in node && path.at(-1) !== 'properties') {
      if ('schema' in node) pairs.push([path.join('/'), 'schema']);
      else if (['type', 'properties', '$ref', 'oneOf', 'anyOf', 'allOf', 'enum', 'const'].some((k) => k in node)) pairs.push([path.join('/'), '']);
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'example' && k !== 'examples') walk(v, [...path, esc(k)]);
  };
  walk(d, ['#']);

  it('finds examples everywhere', () => {
    expect(pairs.length).toBeGreaterThan(120);
  });

  it.each(pairs)('%s validates against its schema', (pointer, sub) => {
    const node = pointer
      .slice(2)
      .split('/')
      .reduce((x: any, k) => x[k.replace(/~1/g, '/').replace(/~0/g, '~')], d);
    const validate = ajv.compile({ $ref: `openapi.json${pointer}${sub ? `/${sub}` : ''}` });
    expect(validate(node.example), ajv.errorsText(validate.errors)).toBe(true);
  });

  it.each(Object.entries(operations))('%s has an example on every JSON body', (_id, o) => {
    const op = d.paths[o.path][o.method];
    const media = [resolve(op.requestBody), ...Object.values<any>(op.responses).map(resolve)]
      .flatMap((r) => Object.entries<any>(r?.content ?? {}))
      .filter(([type]) => type === 'application/json');
    for (const [, m] of media) expect(m.example !== undefined || m.examples !== undefined).toBe(true);
  });
});

describe('error codes', () => {
  it('documents every code the service answers with, under the anchor its documentation_url names', async () => {
    const { readFileSync, readdirSync, statSync } = await import('node:fs');
    const { join } = await import('node:path');
    const files = (dir: string): string[] => readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));
    const source = files('src')
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const used = new Set([...source.matchAll(/new DomainError\('([a-z_]+)'/g)].map((m) => m[1]!));
    expect(used.size).toBeGreaterThan(10);
    const description = String(d.info.description);
    for (const code of used) expect(description, code).toContain(`<a id="error-${code}"></a>`);
  });
});
