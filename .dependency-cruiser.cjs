// The design's dependency rules as code (`npm run lint:deps`; part of `npm run lint`, which .ci/run
// runs). Each rule says why it exists; docs/architecture.md describes the parts they keep apart.
// Paths are relative to the repository root. Type-only imports count like any other (the option
// tsPreCompilationDeps below): a domain that imports a transport's *types* still knows the
// transport, and a type-only loop still ties its modules together.
// Every rule is an error: a rule that the code does not keep yet is work to do, not a warning to
// live with.

/** The two transports, which stand side by side and which nothing below them may know. */
const TRANSPORTS = '^src/(http|signaling)/';

/**
 * What starts the service: the `convene` command and `node dist/src/main.js` (`convene serve`); and
 * the embedded database's thread, which src/db/pglite-thread.ts starts by its path.
 */
const ENTRY_POINTS = '^src/(cli/index|main|db/pglite-worker)[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment:
        'No import loops anywhere: a loop makes its modules one unit that can only be understood, ' +
        'tested and changed together, and its initialisation order depends on which module is loaded first.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-knows-no-transport',
      comment:
        'The domain (src/domain/) is what Convene does, whatever carries the request: it knows neither ' +
        'transport (HTTP statuses and headers, signaling frames and close codes) nor the command line. ' +
        'Errors come from the transport-free error vocabulary; each transport maps them itself.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/(http|signaling|cli)/' },
    },
    {
      name: 'config-knows-no-transport',
      comment:
        'The configuration (src/config/) is read before anything is built and by every part, the CLI ' +
        'included; it depends on no transport. Constants it needs live in the configuration or the domain.',
      severity: 'error',
      from: { path: '^src/config/' },
      to: { path: TRANSPORTS },
    },
    {
      name: 'http-beside-signaling-and-db',
      comment:
        'The HTTP transport (src/http/) reaches data only through domain services, and stands beside ' +
        'the signaling transport, not on it: no imports of src/signaling/ or src/db/, type-only ones ' +
        'included. Liveness of the database and of Redis comes from the neutral places (database.ping(), ' +
        'src/redis/), wired by the composition root.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/(signaling|db)/' },
    },
    {
      name: 'signaling-beside-http',
      comment:
        'The signaling transport (src/signaling/) stands beside the HTTP one: it shares with it only the ' +
        'domain, the error vocabulary and the neutral infrastructure, never src/http/.',
      severity: 'error',
      from: { path: '^src/signaling/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'signaling-reaches-data-through-services',
      comment:
        'The signaling transport (src/signaling/) reaches data only through the domain services the ' +
        'composition root builds and hands in (the room entry service, the webhook outbox): no imports of ' +
        'src/db/, type-only ones included. Which backing service an error names (the database or Redis) ' +
        'comes from the composition root as well.',
      severity: 'error',
      from: { path: '^src/signaling/' },
      to: { path: '^src/db/' },
    },
    {
      name: 'signaling-modules-receive-stores',
      comment:
        'The signaling modules (src/signaling/modules/) are given their stores, chosen once for all of ' +
        'them (src/signaling/room-stores.ts: Redis or in-process): a module neither holds Redis nor picks ' +
        'an implementation, so the same module serves one instance or many, and a test can give two ' +
        "modules one store. The Redis stores' own files (*.redis.ts) use ioredis; src/redis/ is neutral.",
      severity: 'error',
      from: { path: '^src/signaling/modules/', pathNot: '[.]redis[.]ts$' },
      to: { path: ['^node_modules/ioredis/', '(^|/|[.])(local|redis)[.]ts$'], pathNot: '^src/redis/' },
    },
    {
      name: 'handlers-reach-data-through-services',
      comment:
        'Handlers (src/http/handlers/) translate an operation into calls of domain services built once ' +
        'by the composition root; they hold no database, query builder, Redis client or store.',
      severity: 'error',
      from: { path: '^src/http/handlers/' },
      to: {
        path: ['^src/db/', '^src/redis/', '^src/signaling/store/', '/[^/]*redis[^/]*[.]ts$', '^node_modules/(kysely|ioredis|pg|@electric-sql/pglite)/'],
      },
    },
    {
      name: 'sql-only-in-repositories',
      comment:
        'SQL lives in one *.repository.ts per concept (and in src/db/: connection, migrations, paging); ' +
        'services ask repositories, so a query is found where its table is, and a schema change touches ' +
        'one file. Tests and scripts are outside src/ and may query freely.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/db/', '[.]repository[.]ts$'] },
      to: { path: '^node_modules/kysely/' },
    },
    {
      name: 'db-drivers-only-in-db',
      comment:
        'The database drivers (pg, PGlite and its Kysely dialect) are chosen and connected in src/db/ ' +
        'alone; everything else sees a Kysely database, whichever engine is behind it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/db/' },
      to: { path: '^node_modules/(pg|@electric-sql/pglite|kysely-pglite-dialect)/' },
    },
    {
      name: 'migrations-are-frozen',
      comment:
        'A migration is frozen once released: it must mean the same thing forever, so it imports ' +
        'nothing from src/ outside the migrations (a shared helper or schema type that changes later ' +
        'would change what an old migration does). Kysely itself is allowed.',
      severity: 'error',
      from: { path: '^src/db/migrations/' },
      to: { path: '^src/', pathNot: '^src/db/migrations/' },
    },
    {
      name: 'janus-client-stands-alone',
      comment:
        'The Janus WebSocket client (src/media/janus/) speaks the Janus API and nothing else: it imports ' +
        'its own files, the logger and ws, so that the media module that uses it, and no other part, ' +
        'decides what a room, a participant or an error of the contract is.',
      severity: 'error',
      from: { path: '^src/media/janus/' },
      to: { pathNot: ['^src/media/janus/', '^src/logger[.]ts$', '^node_modules/(ws|@types/ws|pino)/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'client-imports-only-its-own',
      comment:
        'The typed client (packages/client/) is published on its own and runs in browsers: it imports ' +
        'its own files, its own generated types and validators, and its declared dependencies ' +
        '(openapi-fetch; ws as an optional peer), never the service (src/), the root generated/ or a ' +
        'Node built-in.',
      severity: 'error',
      from: { path: '^packages/client/src/' },
      to: {
        pathNot: ['^packages/client/(src|generated)/', '^node_modules/(openapi-fetch|ws|@types/ws)/'],
      },
    },
    {
      name: 'src-reached-from-an-entry',
      comment:
        'Every module of src/ is reached from an entry point (src/cli/index.ts, the `convene` command; ' +
        'src/main.ts, `convene serve` by path; src/db/pglite-worker.ts, a thread started by path): one that ' +
        'is not is dead code or a missing wire. ' +
        'Stronger than an orphan check, which misses dead modules that import something.',
      severity: 'error',
      from: { path: ENTRY_POINTS },
      to: { path: '^src/', pathNot: [ENTRY_POINTS, '[.]d[.]ts$'], reachable: false },
    },
    {
      name: 'not-to-unresolvable',
      comment:
        'Every import resolves to a file or a package; this also proves that the resolver understands ' +
        'the NodeNext ".js" specifiers, without which every rule above would pass vacuously.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-non-package-json',
      comment: 'A package that is imported is declared in the package.json of the part that imports it.',
      severity: 'error',
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'src-not-to-dev-dep',
      comment:
        'src/ ships (package.json "files"): what it imports at run time must be a dependency, not a ' +
        'devDependency that an installed package lacks. Type-only imports vanish on compilation.',
      severity: 'error',
      from: { path: '^src/' },
      to: {
        dependencyTypes: ['npm-dev'],
        dependencyTypesNot: ['type-only'],
        pathNot: ['^node_modules/@types/'],
      },
    },
  ],
  options: {
    // Packages are endpoints, not followed into; built, generated-at-install and data folders are
    // not sources.
    doNotFollow: { path: ['node_modules'] },
    exclude: { path: ['^dist/', '^packages/client/dist/', '^data/', '^coverage/'] },
    // Count `import type` as a dependency (see the opening comment).
    tsPreCompilationDeps: true,
    // The root tsconfig covers src/, generated/, the client, scripts/ and test/ with the same
    // NodeNext resolution; the client's own tsconfig only narrows the libraries.
    tsConfig: { fileName: 'tsconfig.json' },
    combinedDependencies: true,
    detectProcessBuiltinModuleCalls: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.d.ts'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
