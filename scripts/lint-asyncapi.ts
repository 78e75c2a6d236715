// Lints spec/asyncapi.yaml with the AsyncAPI parser (its schema validation plus its Spectral ruleset).
// Prints every diagnostic; exits 1 when any is an error or a warning, so `npm run lint:spec` fails on
// both (as Redocly's recommended-strict does for the OpenAPI document). Infos and hints are printed only.
import { readFileSync } from 'node:fs';
import { Parser, DiagnosticSeverity } from '@asyncapi/parser';

const file = process.argv[2] ?? 'spec/asyncapi.yaml';
const SEVERITY: Record<number, string> = {
  [DiagnosticSeverity.Error]: 'error',
  [DiagnosticSeverity.Warning]: 'warning',
  [DiagnosticSeverity.Information]: 'info',
  [DiagnosticSeverity.Hint]: 'hint',
};

const { diagnostics } = await new Parser().parse(readFileSync(file, 'utf8'), { source: file });
for (const d of diagnostics) {
  const where = d.path.length > 0 ? d.path.join('.') : '(document)';
  console.log(`${file}:${d.range.start.line + 1} ${SEVERITY[d.severity] ?? d.severity} ${d.code} at ${where}: ${d.message}`);
}
// The diagnostics' severity is another copy of @stoplight/types' DiagnosticSeverity (spectral-core's), equal in value.
const count = (severity: DiagnosticSeverity) => diagnostics.filter((d) => (d.severity as number) === (severity as number)).length;
const errors = count(DiagnosticSeverity.Error);
const warnings = count(DiagnosticSeverity.Warning);
console.log(`${file}: ${errors} errors, ${warnings} warnings, ${diagnostics.length - errors - warnings} other diagnostics`);
process.exit(errors + warnings > 0 ? 1 : 0);
