// `npm run generate` writes generated/ from spec/; `npm run generate:check` only compares and fails
// on any difference (CI runs it, so generated/ can never drift from the contract).
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { generateOpenApi } from './codegen/openapi.js';
import { generateSignaling } from './codegen/signaling.js';

const OUT = 'generated';
const check = process.argv.includes('--check');

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? listFiles(full) : [relative(OUT, full)];
  });
}

const files: Record<string, string> = { ...(await generateOpenApi()), ...(await generateSignaling()) };
const existing = new Set(listFiles(OUT));
const problems: string[] = [];

for (const [name, content] of Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) {
  const target = join(OUT, name);
  const current = existing.has(name) ? readFileSync(target, 'utf8') : undefined;
  existing.delete(name);
  if (current === content) continue;
  if (check) problems.push(`${target} ${current === undefined ? 'is missing' : 'differs from the spec'}`);
  else {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
    console.log(`wrote ${target}`);
  }
}
for (const stale of existing) {
  if (check) problems.push(`${join(OUT, stale)} is not produced by the generator`);
  else {
    rmSync(join(OUT, stale));
    console.log(`removed ${join(OUT, stale)}`);
  }
}

if (problems.length > 0) {
  console.error(`generated/ is out of date — run \`npm run generate\` and commit the result:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(check ? 'generated/ is up to date' : 'generated/ written');
