/**
 * deploy/convene.service passes `systemd-analyze verify` without a single warning (an unknown or
 * misspelt key is only a warning there, and would be ignored by systemd). The unit names the
 * installed command under /opt/convene, which verify requires to exist, so it is checked with
 * that path pointing at an executable of the test's own. Skipped with the reason when the machine
 * has no systemd-analyze.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { commandEnv, root, runCommand } from '../support/processes.js';

const SYSTEMD_ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((path) => existsSync(path));
const unavailable = SYSTEMD_ANALYZE ? undefined : 'systemd-analyze is missing (Debian package systemd)';
if (unavailable) console.warn(`test/e2e/systemd-unit.test.ts skipped: ${unavailable}`);

const INSTALLED = '/opt/convene/bin/convene';
const dir = mkdtempSync(join(tmpdir(), 'convene-systemd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it.skipIf(unavailable)('deploy/convene.service verifies cleanly', async () => {
  const unit = readFileSync(join(root, 'deploy/convene.service'), 'utf8');
  expect(unit).toContain(`ExecStart=${INSTALLED} serve`);
  expect(unit).toContain(`ExecStartPre=${INSTALLED} migrate`);
  mkdirSync(join(dir, 'bin'));
  const command = join(dir, 'bin/convene');
  writeFileSync(command, '#!/bin/sh\n');
  chmodSync(command, 0o755);
  const path = join(dir, 'convene.service');
  writeFileSync(path, unit.replaceAll(INSTALLED, command));

  const verified = await runCommand(SYSTEMD_ANALYZE!, ['verify', path], dir, commandEnv(dir));
  expect(verified.stderr + verified.stdout).toBe('');
  expect(verified.code).toBe(0);
});
