/**
 * The typed client as its users get it (issue 17): `npm pack` of the workspace packages/client, the
 * tarball installed into a scratch project, and one consumer program that is
 *
 * - type checked strictly against the installed declarations (and a wrong one is refused),
 * - run on Node with the `ws` package against a running Convene: it creates a room through the
 *   HTTP client, starts signaling, joins, and runs a one-second countdown with every frame checked
 *   by the generated validators,
 * - bundled by esbuild for a page that runs the same program in headless Chromium with the
 *   browser's WebSocket (validators included: they are plain ES modules).
 *
 * The tests only talk to loopback, so the install is offline: the client's dependency (openapi-fetch
 * and its helper types) and `ws` are packed from this checkout's node_modules and installed as
 * tarballs, with an empty npm cache. The browser part skips with the reason when /usr/bin/chromium
 * is missing (Debian's chromium; .ci/run installs it).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useSignalingApp } from '../support/signaling.js';
import { commandEnv, root, runCommand } from '../support/processes.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../support/chromium.js';

const noBrowser = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (Debian's chromium package)`;
if (noBrowser) console.warn(`test/e2e/client-package.test.ts: the browser test is skipped: ${noBrowser}`);

/** Packed from node_modules for the offline install: the client's dependency and its own, and ws. */
const PACKED_DEPENDENCIES = ['openapi-fetch', 'openapi-typescript-helpers', 'ws'];

/** The consumer: typed by the package's exports only (HTTP schema types, signaling message types). */
const CONSUMER = `
import { createHttpClient, startSignaling, verifyWebhook, type components, type Schema, type TimerStartCommand, type TimerStoppedEvent, type WebhookHeaders, type WebSocketConstructor } from '@convene/client';

type Room = components['schemas']['Room'];

export interface Outcome {
  room: Room;
  sameRoom: Schema<'Room'>['id'];
  joined: string;
  stopped: TimerStoppedEvent['payload']['kind'];
}

export async function run(options: { server: string; token: string; WebSocket?: WebSocketConstructor }): Promise<Outcome> {
  const http = createHttpClient({ baseUrl: options.server + '/v1', token: options.token });
  const { data, error } = await http.POST('/rooms', { body: { enable_sip: false, waiting_room: false } });
  if (!data) throw new Error('no room: ' + JSON.stringify(error));
  const room: Room = data;
  const alice = await startSignaling(http, { url: options.server, roomId: room.id, validate: true, ...(options.WebSocket ? { WebSocket: options.WebSocket } : {}) });
  const answer = await alice.join('Consumer', { timeoutMs: 5_000 });
  const start: TimerStartCommand['payload'] = { action: 'start', kind: 'countdown', duration: 1, enable_ready_check: false };
  const started = alice.next('timer', 'started', { timeoutMs: 5_000 });
  const stopped = alice.next('timer', 'stopped', { timeoutMs: 5_000 });
  alice.send('timer', start);
  await started;
  const { payload } = await stopped;
  await alice.close();
  return { room, sameRoom: room.id, joined: answer.result, stopped: payload.kind };
}

/** A webhook receiver's part: the verified body, narrowed by its type. */
export async function startedRoom(secret: string, headers: WebhookHeaders, body: string): Promise<string | undefined> {
  const delivery = await verifyWebhook(secret, headers, body);
  return delivery.type === 'room.started' ? delivery.data.room_id : undefined;
}
`;

/** Must not compile: a schema field of the wrong type, and a command the contract does not have. */
const WRONG = `
import type { Schema, TimerStartCommand } from '@convene/client';
export const room: Pick<Schema<'Room'>, 'id'> = { id: 42 };
export const start: TimerStartCommand['payload'] = { action: 'begin', kind: 'countdown', enable_ready_check: false };
`;

/** The Node entry (plain JavaScript, as a user's script): the compiled consumer with the ws package. */
const NODE_MAIN = `
import WebSocket from 'ws';
import { run } from './consumer.js';
const [server, token] = process.argv.slice(2);
console.log(JSON.stringify(await run({ server, token, WebSocket })));
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2022', 'DOM'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    types: [],
    skipLibCheck: false,
  },
};

const scratch = mkdtempSync(join(tmpdir(), 'convene-client-package-'));
const consumer = join(scratch, 'consumer');
const tsc = join(root, 'node_modules/typescript/bin/tsc');
/** npm with an empty cache and configuration of its own, so nothing comes from elsewhere. */
const npmEnv = commandEnv(join(scratch, 'home'), { npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' });
let packed: { files: { path: string }[]; filename: string };

beforeAll(async () => {
  mkdirSync(join(scratch, 'home'));
  const pack = await runCommand('npm', ['pack', '--json', '--pack-destination', scratch], join(root, 'packages/client'), npmEnv, 120_000);
  expect(pack.code, pack.stderr).toBe(0);
  [packed] = JSON.parse(pack.stdout);
  const dependencies: Record<string, string> = { '@convene/client': `file:../${packed.filename}` };
  for (const name of PACKED_DEPENDENCIES) {
    const copy = await runCommand('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', scratch], join(root, 'node_modules', name), npmEnv);
    expect(copy.code, copy.stderr).toBe(0);
    dependencies[name] = `file:../${JSON.parse(copy.stdout)[0].filename}`;
  }

  mkdirSync(consumer);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies }, null, 2));
  writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({ ...TSCONFIG, files: ['consumer.ts'] }, null, 2));
  writeFileSync(join(consumer, 'consumer.ts'), CONSUMER);
  writeFileSync(join(consumer, 'main.js'), NODE_MAIN);
  const install = await runCommand('npm', ['install', '--offline', '--ignore-scripts'], consumer, npmEnv, 120_000);
  expect(install.code, install.stderr).toBe(0);
}, 300_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the packed client', () => {
  it('holds its build and types, nothing of the server, and depends on openapi-fetch alone', () => {
    const files = packed.files.map((file) => file.path).sort();
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'dist/src/index.js',
        'dist/src/index.d.ts',
        'dist/generated/openapi.d.ts',
        'dist/generated/signaling/types.d.ts',
        'dist/generated/signaling/validators.js',
        'dist/generated/signaling/validator-runtime.js',
      ]),
    );
    expect(files.filter((file) => file !== 'package.json' && !/^dist\/(src|generated)\/[\w/.-]+\.(js|d\.ts)$/.test(file))).toEqual([]);
    // the client's own modules only: the server's (http/, domain/, signaling/, cli/ ...) are not there
    expect(files.filter((file) => /^dist\/src\/./.test(file) && !/^dist\/src\/(index|http|webhooks|signaling(-\w+)?)\.(js|d\.ts)$/.test(file))).toEqual([]);
    expect(files.filter((file) => /^dist\/generated\/(operations|openapi-document|signaling\/asyncapi-document)/.test(file))).toEqual([]);

    const manifest = JSON.parse(readFileSync(join(consumer, 'node_modules/@convene/client/package.json'), 'utf8'));
    expect(manifest.dependencies).toEqual({ 'openapi-fetch': '0.17.0' });
    expect(manifest.peerDependenciesMeta).toEqual({ ws: { optional: true } });
    expect(manifest.devDependencies).toBeUndefined();
  });

  it('carries JavaScript that a browser can load: no require() and no node: import', () => {
    for (const file of packed.files.map((f) => f.path).filter((path) => path.endsWith('.js'))) {
      const code = readFileSync(join(consumer, 'node_modules/@convene/client', file), 'utf8');
      expect([file, code.match(/\brequire\s*\(|from\s*["']node:|import\s*\(\s*["']node:/)?.[0]]).toEqual([file, undefined]);
    }
  });

  it('type checks a strict consumer, and refuses one that breaks the contract', async () => {
    const checked = await runCommand(process.execPath, [tsc, '-p', 'tsconfig.json'], consumer, commandEnv(consumer), 120_000);
    expect(checked.code, checked.stdout).toBe(0);
    expect(existsSync(join(consumer, 'consumer.js'))).toBe(true);

    writeFileSync(join(consumer, 'wrong.ts'), WRONG);
    writeFileSync(
      join(consumer, 'tsconfig.wrong.json'),
      JSON.stringify({ ...TSCONFIG, compilerOptions: { ...TSCONFIG.compilerOptions, noEmit: true }, files: ['wrong.ts'] }),
    );
    const refused = await runCommand(process.execPath, [tsc, '-p', 'tsconfig.wrong.json'], consumer, commandEnv(consumer), 120_000);
    expect(refused.code).not.toBe(0);
    expect(refused.stdout).toMatch(/wrong\.ts\(3,[0-9]+\): error TS2322: Type 'number' is not assignable to type 'string'/);
    expect(refused.stdout).toMatch(/wrong\.ts\(4,[0-9]+\): error TS2322: Type '"begin"' is not assignable to type '"start"'/);
  }, 150_000);

  describe('against a running Convene', () => {
    const app = useSignalingApp();

    it('runs on Node with ws: a room made over HTTP, signaling started, joined, a countdown run out', async () => {
      const owner = await app.login('owner');
      const ran = await runCommand(process.execPath, ['main.js', app.url, owner.accessToken], consumer, commandEnv(consumer), 60_000);
      expect(ran.code, ran.stderr).toBe(0);
      const outcome = JSON.parse(ran.stdout);
      expect(outcome).toMatchObject({ joined: 'join_success', stopped: 'expired', room: { created_by: owner.id } });
      expect(outcome.sameRoom).toBe(outcome.room.id);
    }, 90_000);

    it.skipIf(noBrowser !== undefined)(
      'bundled by esbuild, runs the same in headless Chromium with its WebSocket',
      async () => {
        const bundled = await build({
          entryPoints: [join(consumer, 'consumer.js')],
          absWorkingDir: consumer,
          bundle: true,
          format: 'esm',
          platform: 'browser',
          write: false,
          logLevel: 'silent',
        });
        const bundle = bundled.outputFiles[0]!.text;
        expect(bundle).toContain('validate_timer_stopped'); // validate: true carried the validators into the bundle

        const owner = await app.login('browser-owner');
        const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
        try {
          const page = await browser.newPage();
          await page.route(`${app.url}/consumer.js`, (route) => route.fulfill({ status: 200, contentType: 'text/javascript', body: bundle }));
          await page.goto(`${app.url}/health`);
          await page.addScriptTag({ type: 'module', content: "import { run } from '/consumer.js'; globalThis.run = run;" });
          await page.waitForFunction(() => (globalThis as any).run !== undefined, undefined, { timeout: 5_000 });
          const outcome = await page.evaluate(({ server, token }) => (globalThis as any).run({ server, token }), { server: app.url, token: owner.accessToken });
          expect(outcome).toMatchObject({ joined: 'join_success', stopped: 'expired', room: { created_by: owner.id } });
        } finally {
          await browser.close();
        }
      },
      60_000,
    );
  });
});
