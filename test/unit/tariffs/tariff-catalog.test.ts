import { pino } from 'pino';
import { describe, expect, it } from 'vitest';

import { ConfigError, loadConfig } from '../../../src/config/load.js';
import { createTariffCatalog } from '../../../src/domain/tariffs/tariff-catalog.js';
import { offeredModules, SIGNALING_MODULES } from '../../../src/domain/tariffs/modules.js';
import { startJanusServers } from '../../../src/media/janus-servers.js';
import { tariffIdFor, uuidV5 } from '../../../src/domain/tariffs/tariff-id.js';
import { createLocalBus } from '../../../src/signaling/bus/local.js';
import { createSignalingModules } from '../../../src/signaling/modules/index.js';
import { RoomHubs } from '../../../src/signaling/room-hub.js';
import { createRoomStores } from '../../../src/signaling/room-stores.js';
import { systemScheduler } from '../../../src/signaling/scheduler.js';
import { noRoomEntry } from '../../support/module-tester.js';

const definition = (overrides: Partial<{ quotas: Record<string, number>; disabled_modules: string[]; disabled_features: string[] }> = {}) => ({
  quotas: {},
  disabled_modules: [],
  disabled_features: [],
  ...overrides,
});

describe('tariff ids', () => {
  it("follow RFC 9562 version 5 (the RFC's DNS example)", () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('are stable per name and differ between names', () => {
    expect(tariffIdFor('default')).toBe(tariffIdFor('default'));
    expect(tariffIdFor('default')).not.toBe(tariffIdFor('pro'));
    expect(tariffIdFor('default')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('survive rebuilding the catalog (a restart)', () => {
    const config = { default: 'default', definitions: { default: definition() } };
    expect(createTariffCatalog(config).defaultTariff.id).toBe(createTariffCatalog(config).defaultTariff.id);
  });
});

describe('createTariffCatalog', () => {
  const config = {
    default: 'basic',
    definitions: {
      basic: definition({ quotas: { room_participant_limit: 10 }, disabled_modules: ['timer'] }),
      pro: definition({ quotas: { max_storage: 4_294_967_295, room_time_limit_secs: 0 } }),
    },
  };

  it('answers the contract shape: every known module enabled unless disabled', () => {
    const pro = createTariffCatalog(config).byName('pro');
    expect(pro).toEqual({
      id: tariffIdFor('pro'),
      name: 'pro',
      quotas: { max_storage: 4_294_967_295, room_time_limit_secs: 0 },
      enabled_modules: ['control', 'echo', 'moderation', 'timer', 'chat'],
      disabled_features: [],
      modules: [
        { id: 'control', features: [] },
        { id: 'echo', features: [] },
        { id: 'moderation', features: [] },
        { id: 'timer', features: [] },
        { id: 'chat', features: [] },
      ],
    });
    expect(SIGNALING_MODULES.map((module) => module.id)).toEqual(pro?.enabled_modules);
  });

  it('leaves disabled modules out of enabled_modules and modules', () => {
    const basic = createTariffCatalog(config).forUser({ tariff_name: 'basic' });
    expect(basic.name).toBe('basic');
    expect(basic.enabled_modules).toEqual(['control', 'echo', 'moderation', 'chat']);
    expect(basic.modules.map((module) => module.id)).toEqual(['control', 'echo', 'moderation', 'chat']);
  });

  it('removes disabled features from their module and lists them once', () => {
    const modules = [
      { id: 'chat', features: ['private', 'group'] },
      { id: 'timer', features: ['ready_check'] },
    ];
    const catalog = createTariffCatalog(
      { default: 'd', definitions: { d: definition({ disabled_features: ['chat::private', 'chat::private', 'timer::other'] }) } },
      modules,
    );
    expect(catalog.defaultTariff.disabled_features).toEqual(['chat::private', 'timer::other']);
    expect(catalog.defaultTariff.modules).toEqual([
      { id: 'chat', features: ['group'] },
      { id: 'timer', features: ['ready_check'] },
    ]);
  });

  it('gives users without a tariff, or with one no longer configured, the default tariff', () => {
    const catalog = createTariffCatalog(config);
    expect(catalog.forUser({ tariff_name: null }).name).toBe('basic');
    expect(catalog.forUser({ tariff_name: 'removed-last-week' }).name).toBe('basic');
    expect(catalog.forUser({ tariff_name: 'pro' }).name).toBe('pro');
  });

  it("hands out frozen tariffs, so no caller can change another caller's", () => {
    const tariff = createTariffCatalog(config).defaultTariff;
    expect(() => {
      tariff.enabled_modules.push('chat');
    }).toThrow(TypeError);
    expect(() => {
      tariff.quotas.room_participant_limit = 1;
    }).toThrow(TypeError);
  });

  it('refuses a default that is not defined', () => {
    expect(() => createTariffCatalog({ default: 'gold', definitions: { basic: definition() } })).toThrow(/tariffs\.default names "gold"/);
  });

  it.each([4_294_967_296, -1, 1.5])('refuses the quota %s (unsigned 32-bit only)', (value) => {
    expect(() => createTariffCatalog({ default: 'd', definitions: { d: definition({ quotas: { room_participant_limit: value } }) } })).toThrow(
      /tariffs\.definitions\.d\.quotas\.room_participant_limit/,
    );
  });
});

describe('configuration of tariff quotas', () => {
  const withQuota = (value: number) =>
    loadConfig({ file: false, env: {}, overrides: { tariffs: { definitions: { default: { quotas: { room_participant_limit: value } } } } } });

  it('accepts 0 and 4294967295, the unsigned 32-bit bounds', () => {
    expect(createTariffCatalog(withQuota(0).tariffs).defaultTariff.quotas).toEqual({ room_participant_limit: 0 });
    expect(createTariffCatalog(withQuota(4_294_967_295).tariffs).defaultTariff.quotas).toEqual({ room_participant_limit: 4_294_967_295 });
  });

  it.each([4_294_967_296, -1, 2.5])('stops the service on %s, naming the key', (value) => {
    expect(() => withQuota(value)).toThrow(ConfigError);
    expect(() => withQuota(value)).toThrow(/room_participant_limit/);
  });

  it('gives a configuration without tariffs one default tariff with every module', () => {
    const catalog = createTariffCatalog(loadConfig({ file: false, env: {} }).tariffs);
    expect(catalog.forUser({ tariff_name: null })).toMatchObject({
      name: 'default',
      quotas: {},
      enabled_modules: ['control', 'echo', 'moderation', 'timer', 'chat'],
    });
  });
});

describe('the modules a tariff offers', () => {
  /** The namespaces the signaling socket runs, with or without Janus servers (nothing joins: no module reads the database). */
  async function running(media?: Parameters<typeof createSignalingModules>[1]): Promise<string[]> {
    const config = loadConfig({ file: false, env: {} });
    const logger = pino({ level: 'silent' });
    const bus = createLocalBus(logger);
    const hubs = new RoomHubs(bus, new Map(), logger);
    const modules = createSignalingModules(
      { config: config.signaling, roomEntry: noRoomEntry, stores: createRoomStores(), bus, hubs: () => hubs, scheduler: systemScheduler(), logger },
      media,
    );
    await bus.close();
    return [...modules.byNamespace.keys()].sort();
  }

  it('are exactly those the signaling socket runs: without Janus, no media', async () => {
    const config = loadConfig({ file: false, env: {} });
    const offered = createTariffCatalog(config.tariffs, offeredModules(config.media)).defaultTariff;
    expect([...offered.enabled_modules].sort()).toEqual(await running());
    expect(offered.modules.map((module) => module.id).sort()).toEqual(await running());
    expect(offered.enabled_modules).not.toContain('media');
  });

  it('are exactly those the signaling socket runs: with Janus servers, media too', async () => {
    const config = loadConfig({ file: false, env: {}, overrides: { media: { janus_urls: ['ws://127.0.0.1:9'] } } });
    const offered = createTariffCatalog(config.tariffs, offeredModules(config.media)).defaultTariff;
    const servers = await startJanusServers(config.media, pino({ level: 'silent' }));
    try {
      expect([...offered.enabled_modules].sort()).toEqual(await running({ servers, config: config.media }));
      expect(offered.enabled_modules).toContain('media');
    } finally {
      await servers.close();
    }
  });
});
