/**
 * Loads the configuration: the TOML file, then the environment, then test overrides, merged in that
 * order and validated against `configSchema`, which also fills the defaults. Every value remembers
 * where it came from, so that an error names both the key and its source:
 *
 *   configuration: http.port must be integer (from CONVENE_HTTP__PORT)
 *
 * Environment: `CONVENE_<SECTION>__<KEY>` for every key (`__` separates each level, so
 * `CONVENE_TARIFFS__DEFINITIONS__PRO__QUOTAS__MAX_STORAGE`), and the shortcuts of `SHORTCUTS`.
 * A `CONVENE_…` variable beats a shortcut, as it is the more specific of the two. Empty variables
 * count as unset (`DATABASE_URL= npm test` means "no database server").
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { parse as parseToml } from 'smol-toml';

import { configSchema, type Config } from './schema.js';
import { TRUE_REFUSED, TRUST_PROXY_SHAPE, trustedProxyProblem } from './trust-proxy.js';

export class ConfigError extends Error {
  /** One line per problem; `message` holds them all. */
  readonly problems: string[];
  constructor(problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export interface LoadConfigOptions {
  /** The TOML file; default `CONVENE_CONFIG`, else `./convene.toml` if it exists. `false`: read no file. */
  file?: string | false;
  /** Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Deep-merged last (objects merge, arrays and values replace); for tests. */
  overrides?: object;
}

const DEFAULT_FILE = './convene.toml';
const ENV_PREFIX = 'CONVENE_';
/** Names the file, so it is not a key. */
const FILE_VARIABLE = 'CONVENE_CONFIG';
const SHORTCUTS: Record<string, string[]> = {
  PORT: ['http', 'port'],
  DATABASE_URL: ['database', 'url'],
  REDIS_URL: ['redis', 'url'],
  OIDC_ISSUER: ['oidc', 'issuer'],
  OIDC_CLIENT_ID: ['oidc', 'client_id'],
};

type Path = (string | number)[];
type Plain = Record<string, unknown>;

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true });
addFormats.default(ajv, ['uri']);
const validate = ajv.compile<Config>(configSchema);

export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const merged: Plain = {};
  const sources = new Map<string, string>();
  const problems: string[] = [];

  const file = configFile(options.file, env);
  if (file) {
    const table = readToml(file.path, file.required, file.label);
    if (table) mergeAt(merged, [], table, file.path, sources);
  }

  for (const [name, path] of Object.entries(SHORTCUTS)) {
    const raw = env[name];
    if (raw) mergeAt(merged, path, envValue(path, raw), name, sources);
  }

  for (const name of Object.keys(env).sort()) {
    const raw = env[name];
    if (!name.startsWith(ENV_PREFIX) || name === FILE_VARIABLE || !raw) continue;
    const path = envPath(name);
    if (!path) {
      problems.push(`configuration: ${name} is not of the form ${ENV_PREFIX}<SECTION>__<KEY>`);
      continue;
    }
    mergeAt(merged, path, envValue(path, raw), name, sources);
  }

  if (options.overrides) mergeAt(merged, [], options.overrides, 'overrides', sources);

  if (!validate(merged)) {
    // trust_proxy's alternatives would each report a line; one sentence says what it takes
    const trustProxyErrors = (validate.errors ?? []).filter(({ instancePath }) => instancePath.startsWith(TRUST_PROXY_PATH));
    for (const error of validate.errors ?? []) if (!trustProxyErrors.includes(error)) problems.push(describe(error, sources));
    if (trustProxyErrors.length > 0) problems.push(trustProxyMessage((merged.http as Plain).trust_proxy, sources));
  } else {
    const { tariffs, http, metrics } = merged as unknown as Config;
    for (const entry of Array.isArray(http.trust_proxy) ? http.trust_proxy : []) {
      const problem = trustedProxyProblem(entry);
      if (problem) problems.push(`configuration: http.trust_proxy: ${problem}${from(sources, ['http', 'trust_proxy'])}`);
    }
    for (const entry of metrics.allow) {
      const problem = trustedProxyProblem(entry);
      if (problem) problems.push(`configuration: metrics.allow: ${problem}${from(sources, ['metrics', 'allow'])}`);
    }
    if (!Object.hasOwn(tariffs.definitions, tariffs.default)) {
      const source = from(sources, ['tariffs', 'default']) || from(sources, ['tariffs', 'definitions']);
      problems.push(
        `configuration: tariffs.default "${tariffs.default}" is not one of tariffs.definitions` +
          ` (${Object.keys(tariffs.definitions).join(', ') || 'none'})${source}`,
      );
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return merged as unknown as Config;
}

const TRUST_PROXY_PATH = '/http/trust_proxy';

function trustProxyMessage(value: unknown, sources: Map<string, string>): string {
  return `configuration: http.trust_proxy ${value === true ? TRUE_REFUSED : TRUST_PROXY_SHAPE}${from(sources, ['http', 'trust_proxy'])}`;
}

function configFile(option: string | false | undefined, env: NodeJS.ProcessEnv): { path: string; required: boolean; label: string } | undefined {
  if (option === false) return undefined;
  if (option !== undefined) return { path: option, required: true, label: option };
  const named = env[FILE_VARIABLE];
  if (named) return { path: named, required: true, label: `${named} (from ${FILE_VARIABLE})` };
  return { path: DEFAULT_FILE, required: false, label: DEFAULT_FILE };
}

function readToml(path: string, required: boolean, label: string): Plain | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !required) return undefined;
    const reason = code === 'ENOENT' ? 'does not exist' : `cannot be read (${(err as Error).message})`;
    throw new ConfigError([`configuration: the file ${label} ${reason}`]);
  }
  try {
    return parseToml(text);
  } catch (err) {
    throw new ConfigError([`configuration: ${label} is not valid TOML: ${(err as Error).message}`]);
  }
}

/** `CONVENE_HTTP__PORT` → `['http', 'port']`; undefined when malformed. */
function envPath(name: string): string[] | undefined {
  const segments = name.slice(ENV_PREFIX.length).toLowerCase().split('__');
  if (segments.length < 2 || segments.some((segment) => segment === '')) return undefined;
  return segments;
}

/**
 * An environment value as the schema expects it at `path`: kept as text where a string is expected
 * (so that a numeric client id stays a string), parsed as a TOML value elsewhere (`8080`, `true`,
 * `["a", "b"]`, `[{ uris = ["turn:x"], shared_secret = "s" }]`). What does not parse stays text and
 * fails validation with the variable's name.
 */
function envValue(path: Path, raw: string): unknown {
  const schema = schemaAt(path);
  if (!schema || schema.type === 'string') return raw;
  try {
    return (parseToml(`value = ${raw}`) as Plain).value;
  } catch {
    return raw;
  }
}

function schemaAt(path: Path): { type?: string } | undefined {
  let node: unknown = configSchema;
  for (const segment of path) {
    const { properties, additionalProperties } = node as { properties?: Plain; additionalProperties?: unknown };
    if (properties && Object.hasOwn(properties, segment)) node = properties[segment];
    else if (typeof additionalProperties === 'object') node = additionalProperties;
    else return undefined;
  }
  return node as { type?: string };
}

const isPlainObject = (value: unknown): value is Plain => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/** Deep-merges `value` into `target` at `path`, copying it, and records `source` for every key it sets. */
function mergeAt(target: Plain, path: Path, value: unknown, source: string, sources: Map<string, string>): void {
  let node = target;
  for (const [index, segment] of path.entries()) {
    const key = String(segment);
    if (index === path.length - 1) {
      setOwn(node, key, merge(node[key], value, path, source, sources));
      return;
    }
    if (!isPlainObject(node[key])) setOwn(node, key, {});
    node = node[key] as Plain;
  }
  const merged = merge(target, value, path, source, sources) as Plain;
  if (merged !== target) throw new ConfigError([`configuration: ${source} must be a table`]);
}

function merge(existing: unknown, value: unknown, path: Path, source: string, sources: Map<string, string>): unknown {
  if (path.length > 0) sources.set(keyOf(path), source);
  if (!isPlainObject(value)) return Array.isArray(value) ? structuredClone(value) : value;
  const target = isPlainObject(existing) ? existing : {};
  for (const [key, item] of Object.entries(value)) {
    setOwn(target, key, merge(target[key], item, [...path, key], source, sources));
  }
  return target;
}

/** Plain assignment would turn a `__proto__` key into a prototype change; this keeps it a key (and so an unknown one). */
function setOwn(target: Plain, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function describe(error: ErrorObject, sources: Map<string, string>): string {
  const path: Path = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'additionalProperties') {
    const key = (error.params as { additionalProperty: string }).additionalProperty;
    return `configuration: unknown key ${dotted([...path, key])}${from(sources, [...path, key])}`;
  }
  let message = error.message ?? 'is invalid';
  if (error.keyword === 'enum') {
    message += `: ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return `configuration: ${dotted(path) || '(root)'} ${message}${from(sources, path)}`;
}

/**
 * ` (from SOURCE)` for the nearest key on `path` that has one, else for the keys set below it (a
 * table that only `CONVENE_FOO__BAR` created); nothing for defaults.
 */
function from(sources: Map<string, string>, path: Path): string {
  for (let length = path.length; length > 0; length--) {
    const source = sources.get(keyOf(path.slice(0, length)));
    if (source) return ` (from ${source})`;
  }
  const prefix = keyOf(path).slice(0, -1);
  const below = new Set([...sources].filter(([key]) => key.startsWith(`${prefix},`)).map(([, source]) => source));
  return below.size > 0 ? ` (from ${[...below].join(', ')})` : '';
}

const keyOf = (path: Path): string => JSON.stringify(path.map(String));

function dotted(path: Path): string {
  return path.map((segment, index) => (/^\d+$/.test(String(segment)) ? `[${segment}]` : index === 0 ? segment : `.${segment}`)).join('');
}

/** For commands (the service, `npm run migrate`, `npm run dev-token`): a bad configuration ends the process with its message and exit code 2. */
export function loadConfigOrExit(options: LoadConfigOptions = {}): Config {
  try {
    return loadConfig(options);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
}
