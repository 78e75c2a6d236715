/**
 * The development identity provider never runs in production (issue 8). The service, started as
 * `main.ts` is in a process of its own with NODE_ENV=production and no OIDC issuer, stops at once
 * with exit code 2 and a message saying what to configure, before it opens or creates any database
 * and without ever listening; `dev-token` refuses as well. Outside production the same start gets
 * past the identity provider and `dev-token` mints tokens, so NODE_ENV alone makes the difference.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href;
const REFUSAL = 'convene: The development identity provider refuses to run with NODE_ENV=production; configure [oidc] issuer (OIDC_ISSUER)';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a TypeScript entry point of the checkout in `cwd` with only the given environment (and the
 * PATH of this Node). Once stdout shows `stopWhen`, the process gets SIGTERM.
 */
function run(script: string, args: string[], env: Record<string, string>, cwd: string, stopWhen?: string): Promise<Run> {
  const child = spawn(process.execPath, ['--import', tsx, join(root, script), ...args], {
    cwd,
    env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: cwd, TZ: 'UTC', ...env },
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => {
    out.stdout += chunk.toString();
    if (stopWhen && out.stdout.includes(stopWhen)) child.kill('SIGTERM');
  });
  child.stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not end: ${JSON.stringify(out)}`));
    }, 30_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, ...out });
    });
  });
}

/** The service with the embedded database, the development provider switched on and no issuer. */
const service = {
  CONVENE_HTTP__HOST: '127.0.0.1',
  CONVENE_HTTP__PORT: '0',
  CONVENE_DEV__IDENTITY_PROVIDER: 'true',
  CONVENE_LOGGING__LEVEL: 'info',
};

let cwd: string;
beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), 'convene-production-'));
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

describe('NODE_ENV=production without an OIDC issuer', () => {
  it('stops the service with exit code 2 and says why, before creating its embedded database', async () => {
    const result = await run('src/main.ts', [], { ...service, NODE_ENV: 'production' }, cwd);
    expect(result.stderr.trim()).toBe(REFUSAL);
    expect(result.code).toBe(2);
    expect(result.stdout).not.toContain('Convene listening');
    expect(readdirSync(cwd)).toEqual([]); // no ./data, no key file
  });

  it('refuses before the database is reached: an unreachable one does not change the answer', async () => {
    const result = await run('src/main.ts', [], { ...service, NODE_ENV: 'production', DATABASE_URL: 'postgres://127.0.0.1:1/convene' }, cwd);
    expect(result.stderr.trim()).toBe(REFUSAL);
    expect(result.code).toBe(2);
  });

  it('refuses development tokens', async () => {
    const result = await run('src/cli/index.ts', ['dev-token', 'alice'], { NODE_ENV: 'production' }, cwd);
    expect(result.stderr).toContain('development tokens are refused with NODE_ENV=production');
    expect(result.code).not.toBe(0);
    expect(result.stdout).not.toContain('access_token');
  });
});

describe('the same start outside production', () => {
  it('gets past the identity provider (and here on to the unreachable database)', async () => {
    const result = await run('src/main.ts', [], { ...service, NODE_ENV: 'development', DATABASE_URL: 'postgres://127.0.0.1:1/convene' }, cwd);
    expect(result.stderr).not.toContain('identity provider');
    expect(result.stderr).toContain('ECONNREFUSED 127.0.0.1:1');
    expect(result.code).toBe(1);
  });

  it('mints development tokens', async () => {
    const result = await run('src/cli/index.ts', ['dev-token', 'alice'], { NODE_ENV: 'development' }, cwd);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ access_token: expect.any(String), id_token: expect.any(String) });
  });
});
