// ESLint (flat config; `npm run lint:es`, part of `npm run lint`, which .ci/run runs). Type-aware
// linting with typescript-eslint: each TypeScript file is checked with the types of the tsconfig
// that covers it (the project service finds packages/client/tsconfig.json for the client, the root
// tsconfig.json for the rest). Formatting is Prettier's business, not ESLint's: no style rules here.
//
// The shipped code (src/, packages/client/src/) gets typescript-eslint's strict type-checked set;
// the tests and the tools (test/, scripts/) a lighter one, each rule left out with its reason.
import js from '@eslint/js';
import globals from 'globals';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

const SHIPPED = ['src/**/*.ts', 'packages/client/src/**/*.ts'];
const TESTS_AND_TOOLS = ['test/**/*.ts', 'scripts/**/*.ts'];

export default defineConfig(
  {
    // Generated from the contract (drift-checked by `npm run generate:check`), built, or runtime data.
    ignores: ['generated/', 'packages/client/generated/', '**/dist/', 'data/', 'coverage/', 'node_modules/'],
  },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    files: SHIPPED,
    extends: [tseslint.configs.strictTypeChecked],
    rules: {
      // A number in a template literal prints as expected; the rule is kept for what it is for:
      // objects ("[object Object]"), null/undefined and any in messages and keys.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      // `if (bad) return fail(session, 'code');` in a function (async or not) that returns nothing,
      // and `() => resolve()` callbacks, are house idioms: the void is returned on purpose, to end
      // the branch in one line. Using a void value for real is a type error already.
      '@typescript-eslint/no-confusing-void-expression': 'off',
      // The tsconfig's noUncheckedIndexedAccess makes every `xs[i]` possibly undefined; `xs[0]!`
      // after a length check (or a regex group after a match) is how the code tells the compiler
      // what the check proved. Rewriting each as a throw would add branches that cannot run.
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // A migration is frozen: it works on `Kysely<any>` as Kysely advises, so that it never depends on
    // the current schema's types (which change after it).
    files: ['src/db/migrations/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: TESTS_AND_TOOLS,
    extends: [tseslint.configs.recommendedTypeChecked],
    rules: {
      // Tests and tools read HTTP bodies, socket frames and fixtures whose shape the test itself
      // asserts; typing each as a declared type would only restate the assertion. The `any`
      // family of rules would flag every such read.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // `expect(service.method).toHaveBeenCalled()` and vi.spyOn pass methods unbound on purpose.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // For all TypeScript, after the sets above so that these settings win.
    files: ['**/*.ts'],
    rules: {
      // The in-memory twins of the Redis ports (signaling/store/local.ts, *.local.ts, local bus,
      // local rate limiter) implement async interfaces without awaiting anything, on purpose: a
      // throw becomes a rejection as it does in the Redis twin. `async` there is the contract.
      '@typescript-eslint/require-await': 'off',
      // Passing on a rejection as received (a callback's `err`, a caught error, an AbortSignal's
      // `reason`, which DOM APIs reject with too) keeps what the caller can inspect; rejecting with
      // a literal or an object that is not an error is still reported.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // `_` marks a parameter kept for its position (a callback's signature) or a value left out of a
      // rest object on purpose.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // The tools' plain JavaScript (bin/, scripts/*.mjs, the configs): the JavaScript rules with
    // Node's globals, no type information (no tsconfig covers them).
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { globals: globals.node },
  },
);
