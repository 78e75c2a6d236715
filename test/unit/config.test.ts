import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

import { ConfigError, loadConfig } from '../../src/config/load.js';
import { configSchema, type Config } from '../../src/config/schema.js';

const dir = mkdtempSync(join(tmpdir(), 'convene-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function tomlFile(text: string): string {
  const path = join(dir, `config-${++files}.toml`);
  writeFileSync(path, text);
  return path;
}

/** The ConfigError's lines (fails the test when loading succeeds or throws anything else). */
function problems(options: Parameters<typeof loadConfig>[0]): string[] {
  try {
    loadConfig(options);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('loadConfig accepted the configuration');
}

describe('loadConfig', () => {
  it('fills every default when nothing is configured', () => {
    const expected: Config = {
      http: { host: '0.0.0.0', port: 11311, body_limit_bytes: 1048576, trust_proxy: false },
      database: { data_dir: './data', in_memory: false, max_connections: 10, query_timeout_ms: 15000 },
      redis: { command_timeout_ms: 5000 },
      oidc: { client_id: 'convene', service_roles_claim: 'realm_access.roles', call_in_role: 'call-in', provider_name: 'default' },
      dev: { identity_provider: true },
      call_in: {},
      turn: { lifetime: 86400, servers: [] },
      media: {
        janus_urls: [],
        keepalive_interval_ms: 10000,
        request_timeout_ms: 10000,
        max_video_bitrate: 1500000,
        max_screen_bitrate: 8000000,
        screen_share_requires_permission: false,
      },
      endpoints: {
        disable_users_find: false,
        users_find_use_kc: false,
        event_invite_external_email_address: false,
        disallow_custom_display_name: false,
      },
      tariffs: { default: 'default', definitions: { default: { quotas: {}, disabled_modules: [], disabled_features: [] } } },
      signaling: {
        protocols: ['service-signaling-json-v1.0', 'opentalk-signaling-json-v1.0', 'k3k-signaling-json-v1.0'],
        max_frame_bytes: 1048576,
        max_message_bytes: 65536,
        ping_interval_ms: 15000,
        pong_timeout_ms: 20000,
        resumption_refresh_ms: 60000,
        instance_ttl_ms: 15000,
        instance_refresh_ms: 5000,
        crash_sweep_interval_ms: 5000,
      },
      cors: { origins: ['*'] },
      logging: { level: 'info', access_log: true },
      metrics: { allow: ['loopback'] },
      users: { default_language: 'en-US', avatar_base_url: 'https://seccdn.libravatar.org/avatar/', find_limit: 20 },
      assets: { max_upload_bytes: 104857600 },
      smtp: { from: 'Convene <convene@localhost>' },
      calendar_feed: { past_days: 90, max_events: 500 },
      rate_limits: { window_seconds: 300, failures_per_source: 10, failures_per_target: 50 },
      signaling_caps: {
        tickets_window_seconds: 60,
        tickets_per_user: 60,
        tickets_per_invite_code: 200,
        tickets_per_source: 500,
        sockets_per_user: 50,
        sockets_per_invite_code: 100,
        sockets_per_source: 500,
      },
      webhooks: {
        allow_http: false,
        allow_private: false,
        max_subscriptions_per_user: 10,
        timeout_ms: 10000,
        concurrency: 8,
        poll_interval_ms: 1000,
        retry_base_ms: 10000,
        pause_after_failures: 10,
        retention_days: 30,
      },
    };
    expect(loadConfig({ file: false, env: {} })).toEqual(expected);
  });

  it('gives every load its own default objects', () => {
    const first = loadConfig({ file: false, env: {} });
    first.cors.origins.push('https://changed.example');
    first.tariffs.definitions.default!.disabled_modules.push('timer');
    const second = loadConfig({ file: false, env: {} });
    expect(second.cors.origins).toEqual(['*']);
    expect(second.tariffs.definitions.default!.disabled_modules).toEqual([]);
  });

  it('reads the file, then CONVENE_ variables over it, then overrides over both', () => {
    const file = tomlFile(`
      [http]
      port = 8080
      host = "127.0.0.1"
      [database]
      data_dir = "/var/lib/convene"
      [cors]
      origins = ["https://a.example", "https://b.example"]
      [[turn.servers]]
      uris = ["turn:turn.example.org:3478?transport=udp"]
      shared_secret = "s3cret"
    `);
    const env = { CONVENE_HTTP__PORT: '9090', CONVENE_ENDPOINTS__DISABLE_USERS_FIND: 'true', CONVENE_DATABASE__MAX_CONNECTIONS: '25' };

    const config = loadConfig({ file, env });
    expect(config.http).toEqual({ host: '127.0.0.1', port: 9090, body_limit_bytes: 1048576, trust_proxy: false });
    expect(config.database).toEqual({ data_dir: '/var/lib/convene', in_memory: false, max_connections: 25, query_timeout_ms: 15000 });
    expect(config.endpoints.disable_users_find).toBe(true);
    expect(config.cors.origins).toEqual(['https://a.example', 'https://b.example']);
    expect(config.turn.servers).toEqual([{ uris: ['turn:turn.example.org:3478?transport=udp'], shared_secret: 's3cret' }]);

    const overridden = loadConfig({ file, env, overrides: { http: { port: 0 }, cors: { origins: ['https://c.example'] } } });
    expect(overridden.http).toMatchObject({ host: '127.0.0.1', port: 0 });
    expect(overridden.cors.origins).toEqual(['https://c.example']);
  });

  it('parses variables as TOML values where the key is not a string, and keeps strings verbatim', () => {
    const config = loadConfig({
      file: false,
      env: {
        CONVENE_SIGNALING__PROTOCOLS: '["service-signaling-json-v1.0"]',
        CONVENE_TURN__SERVERS: '[{ uris = ["turn:127.0.0.1:3478"], shared_secret = "x" }]',
        CONVENE_TARIFFS__DEFAULT: 'pro',
        CONVENE_TARIFFS__DEFINITIONS__PRO__QUOTAS__MAX_STORAGE: '1_000_000',
        CONVENE_TARIFFS__DEFINITIONS__PRO__DISABLED_MODULES: '["timer"]',
        CONVENE_CALL_IN__TEL: '+49 30 1234567',
        CONVENE_OIDC__CLIENT_ID: '12345',
      },
    });
    expect(config.signaling.protocols).toEqual(['service-signaling-json-v1.0']);
    expect(config.turn.servers).toEqual([{ uris: ['turn:127.0.0.1:3478'], shared_secret: 'x' }]);
    expect(config.tariffs).toEqual({
      default: 'pro',
      definitions: { pro: { quotas: { max_storage: 1000000 }, disabled_modules: ['timer'], disabled_features: [] } },
    });
    expect(config.call_in.tel).toBe('+49 30 1234567');
    expect(config.oidc.client_id).toBe('12345');
  });

  it.each([
    ['PORT', '3000', (c: Config) => c.http.port, 3000],
    ['DATABASE_URL', 'postgres://db.example/convene', (c: Config) => c.database.url, 'postgres://db.example/convene'],
    ['REDIS_URL', 'redis://cache.example:6379', (c: Config) => c.redis.url, 'redis://cache.example:6379'],
    ['OIDC_ISSUER', 'https://idp.example/realms/main', (c: Config) => c.oidc.issuer, 'https://idp.example/realms/main'],
    ['OIDC_CLIENT_ID', 'frontend', (c: Config) => c.oidc.client_id, 'frontend'],
  ])('takes the shortcut %s', (name, value, read, expected) => {
    expect(read(loadConfig({ file: false, env: { [name]: value } }))).toEqual(expected);
  });

  it('lets a shortcut override the file and a CONVENE_ variable override the shortcut', () => {
    const file = tomlFile('[http]\nport = 8080\n[database]\nurl = "postgres://file.example/db"\n');
    expect(loadConfig({ file, env: { PORT: '3000' } }).http.port).toBe(3000);
    expect(loadConfig({ file, env: { PORT: '3000', CONVENE_HTTP__PORT: '4000' } }).http.port).toBe(4000);
    expect(loadConfig({ file, env: { DATABASE_URL: 'postgres://env.example/db' } }).database.url).toBe('postgres://env.example/db');
  });

  it('treats empty variables as unset', () => {
    const file = tomlFile('[database]\nurl = "postgres://file.example/db"\n');
    expect(loadConfig({ file, env: { DATABASE_URL: '', CONVENE_DATABASE__URL: '' } }).database.url).toBe('postgres://file.example/db');
  });

  it('reads the file CONVENE_CONFIG names, and refuses a named file that does not exist', () => {
    const file = tomlFile('[logging]\nlevel = "debug"\n');
    expect(loadConfig({ env: { CONVENE_CONFIG: file } }).logging.level).toBe('debug');

    const missing = join(dir, 'missing.toml');
    expect(problems({ env: { CONVENE_CONFIG: missing } })).toEqual([`configuration: the file ${missing} (from CONVENE_CONFIG) does not exist`]);
    expect(problems({ file: missing, env: {} })).toEqual([`configuration: the file ${missing} does not exist`]);
  });

  it('reads ./convene.toml when it exists and does without it when not', () => {
    const cwd = process.cwd();
    const workDir = mkdtempSync(join(dir, 'cwd-'));
    try {
      process.chdir(workDir);
      expect(loadConfig({ env: {} }).http.port).toBe(11311);
      writeFileSync(join(workDir, 'convene.toml'), '[http]\nport = 8081\n');
      expect(loadConfig({ env: {} }).http.port).toBe(8081);
    } finally {
      process.chdir(cwd);
    }
  });

  it('names an ill-typed key and the variable it came from', () => {
    expect(problems({ file: false, env: { CONVENE_HTTP__PORT: 'eighty' } })).toEqual(['configuration: http.port must be integer (from CONVENE_HTTP__PORT)']);
    expect(problems({ file: false, env: { PORT: '80.5' } })).toEqual(['configuration: http.port must be integer (from PORT)']);
  });

  it('names an ill-typed key and the file it came from', () => {
    const file = tomlFile('[endpoints]\ndisable_users_find = "yes"\n[[turn.servers]]\nuris = []\nshared_secret = "s"\n');
    expect(problems({ file, env: {} })).toEqual([
      `configuration: turn.servers[0].uris must NOT have fewer than 1 items (from ${file})`,
      `configuration: endpoints.disable_users_find must be boolean (from ${file})`,
    ]);
  });

  it('names unknown keys and where they came from', () => {
    const file = tomlFile('[http]\nprot = 8080\n[telemetry]\nenabled = true\n');
    expect(problems({ file, env: { CONVENE_OIDC__ISSUR: 'https://idp.example', CONVENE_SMTP__HOST__NAME: 'x' } })).toEqual([
      `configuration: unknown key telemetry (from ${file})`,
      `configuration: unknown key http.prot (from ${file})`,
      'configuration: unknown key oidc.issur (from CONVENE_OIDC__ISSUR)',
      'configuration: unknown key smtp.host (from CONVENE_SMTP__HOST__NAME)',
    ]);
  });

  it('reads whom access tokens must be meant for as lists, and refuses the former single audience', () => {
    const config = loadConfig({
      file: false,
      env: { CONVENE_OIDC__AUTHORIZED_PARTIES: '["Frontend", "call-in-gateway"]', CONVENE_OIDC__AUDIENCES: '["convene-api"]' },
    });
    expect(config.oidc).toMatchObject({ authorized_parties: ['Frontend', 'call-in-gateway'], audiences: ['convene-api'] });
    expect(loadConfig({ file: false, env: {} }).oidc).not.toHaveProperty('authorized_parties');
    expect(problems({ file: false, env: { CONVENE_OIDC__AUDIENCE: 'convene-api' } })).toEqual([
      'configuration: unknown key oidc.audience (from CONVENE_OIDC__AUDIENCE)',
    ]);
    expect(problems({ file: false, env: { CONVENE_OIDC__AUTHORIZED_PARTIES: '[]' } })).toEqual([
      'configuration: oidc.authorized_parties must NOT have fewer than 1 items (from CONVENE_OIDC__AUTHORIZED_PARTIES)',
    ]);
  });

  it('names a value outside its allowed set', () => {
    expect(problems({ file: false, env: {}, overrides: { logging: { level: 'loud' } } })).toEqual([
      'configuration: logging.level must be equal to one of the allowed values: "fatal", "error", "warn", "info", "debug", "trace", "silent" (from overrides)',
    ]);
    expect(problems({ file: false, env: { OIDC_ISSUER: 'not a url' } })).toEqual(['configuration: oidc.issuer must match format "uri" (from OIDC_ISSUER)']);
  });

  it('refuses a CONVENE_ variable that names no key', () => {
    expect(problems({ file: false, env: { CONVENE_HTTP_PORT: '80' } })).toEqual([
      'configuration: CONVENE_HTTP_PORT is not of the form CONVENE_<SECTION>__<KEY>',
    ]);
  });

  it('names a file that is not valid TOML', () => {
    const file = tomlFile('[http\nport = 1\n');
    const [problem] = problems({ file, env: {} });
    expect(problem).toMatch(new RegExp(`^configuration: ${file.replace(/[.\\]/g, '\\$&')} is not valid TOML: `));
  });

  it('requires the default tariff to be defined', () => {
    const file = tomlFile('[tariffs]\ndefault = "gold"\n[tariffs.definitions.silver]\nquotas = { room_participant_limit = 10 }\n');
    expect(problems({ file, env: {} })).toEqual([`configuration: tariffs.default "gold" is not one of tariffs.definitions (silver) (from ${file})`]);
    // defining tariffs replaces the built-in one, so the default must name one of them
    expect(problems({ file: false, env: { CONVENE_TARIFFS__DEFINITIONS__PRO__QUOTAS__MAX_STORAGE: '1' } })).toEqual([
      'configuration: tariffs.default "default" is not one of tariffs.definitions (pro) (from CONVENE_TARIFFS__DEFINITIONS__PRO__QUOTAS__MAX_STORAGE)',
    ]);
  });

  it('checks quota values as unsigned 32-bit integers', () => {
    const file = tomlFile('[tariffs.definitions.default.quotas]\nmax_storage = 4294967296\n');
    expect(problems({ file, env: {} })).toEqual([`configuration: tariffs.definitions.default.quotas.max_storage must be <= 4294967295 (from ${file})`]);
  });
  it('bounds the calendar feed: past_days 0 to 3660, max_events 1 to 10000', () => {
    const feed = (env: Record<string, string>) => loadConfig({ file: false, env }).calendar_feed;
    expect(feed({ CONVENE_CALENDAR_FEED__PAST_DAYS: '0', CONVENE_CALENDAR_FEED__MAX_EVENTS: '1' })).toEqual({ past_days: 0, max_events: 1 });
    expect(feed({ CONVENE_CALENDAR_FEED__PAST_DAYS: '3660', CONVENE_CALENDAR_FEED__MAX_EVENTS: '10000' })).toEqual({ past_days: 3660, max_events: 10000 });
    expect(problems({ file: false, env: { CONVENE_CALENDAR_FEED__PAST_DAYS: '-1', CONVENE_CALENDAR_FEED__MAX_EVENTS: '0' } })).toEqual([
      'configuration: calendar_feed.past_days must be >= 0 (from CONVENE_CALENDAR_FEED__PAST_DAYS)',
      'configuration: calendar_feed.max_events must be >= 1 (from CONVENE_CALENDAR_FEED__MAX_EVENTS)',
    ]);
    expect(problems({ file: false, env: { CONVENE_CALENDAR_FEED__PAST_DAYS: '3661', CONVENE_CALENDAR_FEED__MAX_EVENTS: '10001' } })).toEqual([
      'configuration: calendar_feed.past_days must be <= 3660 (from CONVENE_CALENDAR_FEED__PAST_DAYS)',
      'configuration: calendar_feed.max_events must be <= 10000 (from CONVENE_CALENDAR_FEED__MAX_EVENTS)',
    ]);
  });
  it('bounds the webhook log’s retention: retention_days 1 to 3660', () => {
    const days = (value: string) => loadConfig({ file: false, env: { CONVENE_WEBHOOKS__RETENTION_DAYS: value } }).webhooks.retention_days;
    expect([days('1'), days('3660')]).toEqual([1, 3660]);
    expect(problems({ file: false, env: { CONVENE_WEBHOOKS__RETENTION_DAYS: '0' } })).toEqual([
      'configuration: webhooks.retention_days must be >= 1 (from CONVENE_WEBHOOKS__RETENTION_DAYS)',
    ]);
    expect(problems({ file: false, env: { CONVENE_WEBHOOKS__RETENTION_DAYS: '3661' } })).toEqual([
      'configuration: webhooks.retention_days must be <= 3660 (from CONVENE_WEBHOOKS__RETENTION_DAYS)',
    ]);
  });
});

describe('[http] trust_proxy', () => {
  const trustProxy = (env: Record<string, string>) => loadConfig({ file: false, env }).http.trust_proxy;

  it('trusts no proxy by default, and takes a hop count or proxy addresses and networks', () => {
    expect(trustProxy({})).toBe(false);
    expect(trustProxy({ CONVENE_HTTP__TRUST_PROXY: 'false' })).toBe(false);
    expect(trustProxy({ CONVENE_HTTP__TRUST_PROXY: '1' })).toBe(1);
    expect(trustProxy({ CONVENE_HTTP__TRUST_PROXY: '0' })).toBe(0);
    const list = ['127.0.0.1', '10.0.0.0/8', '2001:db8::/32', '::1', 'loopback', 'uniquelocal', 'linklocal', '0.0.0.0/0'];
    expect(trustProxy({ CONVENE_HTTP__TRUST_PROXY: JSON.stringify(list) })).toEqual(list);
    const file = tomlFile('[http]\ntrust_proxy = ["192.0.2.10", "192.0.2.11"]\n');
    expect(loadConfig({ file, env: {} }).http.trust_proxy).toEqual(['192.0.2.10', '192.0.2.11']);
  });

  it('refuses true, which would let every client name its own address, saying what to give instead', () => {
    const file = tomlFile('[http]\ntrust_proxy = true\n');
    const [fromFile, ...more] = problems({ file, env: {} });
    expect(more).toEqual([]);
    expect(fromFile).toMatch(/^configuration: http\.trust_proxy must not be true: .*left-most X-Forwarded-For.*number of proxies.*\(from .*\.toml\)$/);
    expect(problems({ file: false, env: { CONVENE_HTTP__TRUST_PROXY: 'true' } })).toEqual([
      expect.stringMatching(/^configuration: http\.trust_proxy must not be true: .*\(from CONVENE_HTTP__TRUST_PROXY\)$/),
    ]);
  });

  it('refuses anything else with one line naming what it takes', () => {
    const shape = (source: string) =>
      `configuration: http.trust_proxy must be false, a number of proxies (0 to 10) or a list of proxy addresses or networks (from ${source})`;
    for (const value of ['yes', '11', '-1', '1.5', '[]', '[1]', '{ a = 1 }']) {
      expect(problems({ file: false, env: { CONVENE_HTTP__TRUST_PROXY: value } }), value).toEqual([shape('CONVENE_HTTP__TRUST_PROXY')]);
    }
  });

  it('names every list entry Express would not take for an address or network', () => {
    const entries = ['proxy.example.org', '10.0.0.0/33', '::1/129', '10.0.0.1/8/1', '10.0.0.0/x', '10.0.0.0/', 'localhost'];
    expect(problems({ file: false, env: {}, overrides: { http: { trust_proxy: ['127.0.0.1', ...entries] } } })).toEqual([
      'configuration: http.trust_proxy: "proxy.example.org" is no IP address or network (address/prefix length) (from overrides)',
      'configuration: http.trust_proxy: "10.0.0.0/33" has no prefix length of 0 to 32 (from overrides)',
      'configuration: http.trust_proxy: "::1/129" has no prefix length of 0 to 128 (from overrides)',
      'configuration: http.trust_proxy: "10.0.0.1/8/1" is no IP address or network (address/prefix length) (from overrides)',
      'configuration: http.trust_proxy: "10.0.0.0/x" has no prefix length of 0 to 32 (from overrides)',
      'configuration: http.trust_proxy: "10.0.0.0/" has no prefix length of 0 to 32 (from overrides)',
      'configuration: http.trust_proxy: "localhost" is no IP address or network (address/prefix length) (from overrides)',
    ]);
  });
});

describe('convene.example.toml', () => {
  const example = fileURLToPath(new URL('../../convene.example.toml', import.meta.url));

  it('loads, and sets exactly the defaults', () => {
    expect(loadConfig({ file: example, env: {} })).toEqual(loadConfig({ file: false, env: {} }));
  });

  it('documents every key of the schema', () => {
    const text = readFileSync(example, 'utf8');
    const missing: string[] = [];
    const visit = (schema: { properties?: Record<string, object> }, path: string[]) => {
      for (const [key, child] of Object.entries(schema.properties ?? {})) {
        const table = [...path, key].join('.');
        const documented = new RegExp(`^#? ?${key} = `, 'm').test(text) || new RegExp(`^#? ?\\[\\[?${table.replace(/\./g, '\\.')}[\\].]`, 'm').test(text);
        if (!documented) missing.push(table);
        if (path.length === 0) visit(child, [key]);
      }
    };
    visit(configSchema, []);
    expect(missing).toEqual([]);
  });
});
