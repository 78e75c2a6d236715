// CPU profiles of a benchmark's server process, one per measured operation: with BENCH_CPU_PROF=<dir>,
// the IPC message `{type: 'profile', name}` starts a profile of this process and the next one (or
// `stop()`, before the process exits) writes it to `<dir>/<name>.cpuprofile`, for Chrome DevTools
// or any .cpuprofile reader. Without BENCH_CPU_PROF the messages are ignored.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

const profileDir = process.env.BENCH_CPU_PROF || undefined;
let current: { session: Session; name: string } | undefined;

/** Writes the running profile, if any. */
export async function stopProfile(): Promise<void> {
  if (!current || !profileDir) return;
  const { session, name } = current;
  current = undefined;
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  mkdirSync(profileDir, { recursive: true });
  writeFileSync(join(profileDir, `${name.replace(/[^A-Za-z0-9._-]+/g, '_')}.cpuprofile`), JSON.stringify(profile));
}

/** Ends the running profile and starts one named `name`. */
export async function startProfile(name: string): Promise<void> {
  await stopProfile();
  if (!profileDir) return;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  current = { session, name };
}
