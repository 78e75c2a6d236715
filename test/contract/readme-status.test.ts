import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { operations } from '../../generated/operations.js';
import { NOT_YET_IMPLEMENTED } from '../../src/http/handlers/not-yet.js';

describe('README status table', () => {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.slice(readme.indexOf('## Status'), readme.indexOf('\n## ', readme.indexOf('## Status') + 1));
  const table = section.slice(0, section.indexOf('Built:'));
  const built = section.slice(section.indexOf('Built:'));
  const named = (text: string) => new Set([...text.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!).filter((n) => n in operations));

  it('lists exactly the operations that still answer 501, with their issue', () => {
    expect([...named(table)].sort()).toEqual(Object.keys(NOT_YET_IMPLEMENTED).sort());
    for (const [id, issue] of Object.entries(NOT_YET_IMPLEMENTED)) {
      const row = table.split('\n').find((line) => line.includes(`\`${id}\``))!;
      expect(row.trim().endsWith(`| ${String(issue)} |`), id).toBe(true);
    }
  });

  it('names every built operation', () => {
    const expected = Object.keys(operations).filter((id) => !(id in NOT_YET_IMPLEMENTED));
    expect([...named(built)].sort()).toEqual(expected.sort());
  });
});
