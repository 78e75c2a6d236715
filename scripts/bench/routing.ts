// Routing cost per request: Convene's route table (src/http/routes.ts) against openapi-backend's own
// matcher, over the whole contract, for a static path and two templated ones. Prints µs per match.
// Run: npx tsx scripts/bench/routing.ts
import { OpenAPIBackend } from 'openapi-backend';
import { openapiDocument } from '../../generated/openapi-document.js';
import { operations } from '../../generated/operations.js';
import { RouteTable } from '../../src/http/routes.js';

class Backend extends OpenAPIBackend {
  override validateDefinition() {
    return this.document;
  }
}

const id = '6f1c1f0e-8d0f-4b8e-9e55-0c5a2b8a1f00';
const cases: [string, string][] = [
  ['GET', '/users/me'],
  ['GET', `/users/${id}`],
  ['DELETE', `/rooms/${id}/streaming_targets/${id}`],
];

const table = new RouteTable<string>();
for (const [operationId, op] of Object.entries(operations)) table.add(op.method, op.path, operationId);
const backend = new Backend({ definition: structuredClone(openapiDocument) as never, apiRoot: '/', quick: true, validate: false });
await backend.init();

function time(label: string, fn: () => unknown, iterations: number): number {
  for (let i = 0; i < Math.min(iterations, 1000); i++) fn(); // warm up
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  const us = Number(process.hrtime.bigint() - start) / 1e3 / iterations;
  console.log(`${label.padEnd(58)} ${us.toFixed(2).padStart(9)} µs/match`);
  return us;
}

console.log(`${Object.keys(operations).length} operations in the contract\n`);
for (const [method, path] of cases) {
  const ours = time(`route table      ${method} ${path.replace(id, '{id}').replace(id, '{id}')}`, () => table.match(method, path), 200_000);
  const theirs = time(
    `openapi-backend  ${method} ${path.replace(id, '{id}').replace(id, '{id}')}`,
    () => backend.router.matchOperation({ method, path, headers: {} }),
    2_000,
  );
  console.log(`${''.padEnd(58)} ×${(theirs / ours).toFixed(0)} faster\n`);
}
