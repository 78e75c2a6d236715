// The benchmarks measure Convene as `npm start` runs it: compiled by tsc into dist/, not its sources
// through tsx. tsx's transform (esbuild, keeping names) wraps every function made at run time in a
// naming helper, `__name`; closures made per request then cost the no-query request 2.5% of its
// CPU in its profile, which production never pays.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Builds dist/ from the sources as they are now (tsc, some 20 s), so that no figure comes from a stale build. */
export function buildConvene(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
}

/** A module of the build, by its path under src/: `builtModule('server.js')` loads dist/src/server.js. */
export function builtModule<T>(path: string): Promise<T> {
  return import(new URL(`../../dist/src/${path}`, import.meta.url).href) as Promise<T>;
}
