// `npm run generate` writes generated/ from spec/; `npm run generate:check` only compares and fails
// on any difference (CI runs it, so generated/ can never drift from the contract).
//
// The typed client (packages/client) gets its own copy of the generated files it is built from, in
// packages/client/generated/, written and checked here with the rest. A committed copy rather than
// one made by the client's build: the workspace is then whole as checked out (its sources type
// check, run under tsx and pack without a step that reaches outside it), and git stores the
// identical files once.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { generateOpenApi } from './codegen/openapi.js';
import { generateSignaling } from './codegen/signaling.js';

const OUT = 'generated';
const CLIENT_OUT = 'packages/client/generated';
/** What the client's sources import (types, validators and their runtime); nothing of the server. */
const CLIENT_FILES = ['openapi.ts', 'signaling/types.ts', 'signaling/validators.js', 'signaling/validators.d.ts', 'signaling/validator-runtime.js'];
const check = process.argv.includes('--check');

function listFiles(root: string, dir = root): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? listFiles(root, full) : [relative(root, full)];
  });
}

/** Writes (or with --check compares) `files` into `out`, removing what the generator no longer makes. */
function sync(out: string, files: Record<string, string>): string[] {
  const existing = new Set(listFiles(out));
  const problems: string[] = [];
  for (const [name, content] of Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) {
    const target = join(out, name);
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
    if (check) problems.push(`${join(out, stale)} is not produced by the generator`);
    else {
      rmSync(join(out, stale));
      console.log(`removed ${join(out, stale)}`);
    }
  }
  return problems;
}

const files: Record<string, string> = { ...(await generateOpenApi()), ...(await generateSignaling()) };
const clientFiles = Object.fromEntries(CLIENT_FILES.map((name) => [name, files[name] ?? '']));
const missing = CLIENT_FILES.filter((name) => files[name] === undefined);
if (missing.length > 0) throw new Error(`the client's files are not generated: ${missing.join(', ')}`);
const problems = [...sync(OUT, files), ...sync(CLIENT_OUT, clientFiles)];

if (problems.length > 0) {
  console.error(`generated/ is out of date — run \`npm run generate\` and commit the result:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(check ? `${OUT}/ and ${CLIENT_OUT}/ are up to date` : `${OUT}/ and ${CLIENT_OUT}/ written`);
