/**
 * Values derived from the contract's JSON Schemas (OpenAPI 3.1 and AsyncAPI alike), for the
 * hostile-input properties (test/property):
 *
 * - `conforming(schema)`: values the schema accepts, small and mostly plain, so that a request
 *   built from them gets past validation and into the handlers;
 * - `hostile(schema)`: values that break one of the schema's constraints or stand on its edge:
 *   every JSON type the schema does not allow, lengths and bounds at the limit and one beyond,
 *   malformed uuids, dates, e-mail addresses and URIs, near misses of enums, missing required and
 *   extra unknown properties, too many items, deep nesting, and strings of every kind (strings.ts);
 * - `fieldsOf(schema)` and `withField`: every property at any depth, to make one of them hostile.
 *
 * Conditionals (`if`/`then`/`else`, `not`) are not followed: a value they refuse is simply one more
 * hostile value. `$ref`s are resolved against the document the schema comes from.
 */
import fc from 'fast-check';
import { hugeString, nastyString, stringOfLength, type Text } from './strings.js';

export type Schema = Record<string, any>;

export interface SchemaSource {
  /** The document `#/…` references point into. */
  root: Record<string, any>;
  /**
   * Ids that name something, offered for `format: uuid` besides random ones, so that references
   * sometimes hit; asked for each value, so they may change between values.
   */
  knownIds?: () => readonly string[];
}

export interface HostileOptions {
  /** Offer strings of a megabyte (for bodies; a URL that long is refused by Node before the app sees it). */
  huge?: boolean;
}

/** Follows `$ref`s to the schema itself. */
export function resolve(schema: Schema | undefined, root: Record<string, any>): Schema {
  let node = schema ?? {};
  for (let hops = 0; typeof node.$ref === 'string'; hops++) {
    if (hops > 32) throw new Error(`$ref cycle at ${node.$ref}`);
    const path = node.$ref
      .replace(/^#\//, '')
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    node = path.reduce((at: any, key) => at?.[key], root) as Schema;
    if (!node) throw new Error(`unresolvable $ref ${schema?.$ref}`);
  }
  return node;
}

/** The schema with its `allOf` parts merged in (their properties and required lists), conditionals left out. */
function flatten(schema: Schema | undefined, root: Record<string, any>): Schema {
  const own = resolve(schema, root);
  if (!Array.isArray(own.allOf)) return own;
  const { allOf, ...rest } = own;
  return (allOf as Schema[]).reduce((merged: Schema, part) => merge(merged, flatten(part, root)), rest);
}

function merge(base: Schema, part: Schema): Schema {
  const { if: _if, then: _then, else: _else, not: _not, ...keep } = part;
  return {
    ...base,
    ...keep,
    properties: { ...base.properties, ...keep.properties },
    required: [...new Set([...(base.required ?? []), ...(keep.required ?? [])])],
  };
}

/** The branches of a `oneOf`/`anyOf`, each with the keywords around it. */
function branchesOf(schema: Schema, root: Record<string, any>): Schema[] | undefined {
  const branches = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (!branches) return undefined;
  const { oneOf: _o, anyOf: _a, ...around } = schema;
  return branches.map((branch) => merge(around, flatten(branch, root)));
}

type JsonType = 'string' | 'integer' | 'number' | 'boolean' | 'null' | 'array' | 'object';

function typesOf(schema: Schema): JsonType[] | undefined {
  if (Array.isArray(schema.type)) return schema.type;
  if (typeof schema.type === 'string') return [schema.type as JsonType];
  if (schema.properties) return ['object'];
  if (schema.items) return ['array'];
  return undefined; // anything goes
}

const MAX_DEPTH = 6;

/**
 * The arbitraries of a source's schemas, built once: building one walks the whole schema, and the
 * properties ask for the same schemas for every value they generate.
 */
const built = new WeakMap<SchemaSource, WeakMap<Schema, Map<string, fc.Arbitrary<unknown>>>>();

function once(kind: string, schema: Schema | undefined, source: SchemaSource, build: () => fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  if (!schema) return build();
  let bySchema = built.get(source);
  if (!bySchema) built.set(source, (bySchema = new WeakMap()));
  let byKind = bySchema.get(schema);
  if (!byKind) bySchema.set(schema, (byKind = new Map()));
  let arbitrary = byKind.get(kind);
  if (!arbitrary) byKind.set(kind, (arbitrary = build()));
  return arbitrary;
}

/** One of the ids the source knows, as they are when the value is generated. */
export const knownId = (source: SchemaSource, fallback: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.constant(null).chain(() => {
    const ids = source.knownIds?.() ?? [];
    return ids.length > 0 ? fc.constantFrom(...ids) : fallback;
  });

export function conforming(schema: Schema | undefined, source: SchemaSource, depth = 0): fc.Arbitrary<unknown> {
  return depth === 0 ? once('conforming', schema, source, () => conformingOf(schema, source, 0)) : conformingOf(schema, source, depth);
}

function conformingOf(schema: Schema | undefined, source: SchemaSource, depth: number): fc.Arbitrary<unknown> {
  const s = flatten(schema, source.root);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const branches = branchesOf(s, source.root);
  if (branches) return fc.oneof(...branches.map((branch) => conforming(branch, source, depth + 1)));
  const types = typesOf(s);
  if (!types || depth > MAX_DEPTH) return fc.jsonValue({ maxDepth: 2 });
  return fc.oneof(...types.map((type) => conformingOfType(type, s, source, depth)));
}

function conformingOfType(type: JsonType, s: Schema, source: SchemaSource, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      return conformingString(s, source);
    case 'integer':
      return fc.integer({ min: s.minimum ?? -1_000_000, max: s.maximum ?? 1_000_000 });
    case 'number':
      return fc.oneof(
        fc.integer({ min: s.minimum ?? -1_000_000, max: s.maximum ?? 1_000_000 }),
        fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true }),
      );
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(conforming(s.items, source, depth + 1), {
        minLength: s.minItems ?? 0,
        maxLength: Math.min(s.maxItems ?? 3, Math.max(3, s.minItems ?? 0)),
      });
    case 'object': {
      const properties = (s.properties ?? {}) as Record<string, Schema>;
      if (Object.keys(properties).length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
      const required = new Set<string>(s.required ?? []);
      const shape = Object.fromEntries(Object.entries(properties).map(([name, sub]) => [name, conforming(sub, source, depth + 1)]));
      return fc.record(shape, { requiredKeys: Object.keys(properties).filter((name) => required.has(name)) });
    }
  }
}

function conformingString(s: Schema, source: SchemaSource): fc.Arbitrary<string> {
  const max: number = s.maxLength ?? 40;
  const fits = (text: string) => [...text].length <= max && [...text].length >= (s.minLength ?? 0);
  switch (s.format) {
    case 'uuid':
      return source.knownIds ? fc.oneof(knownId(source, fc.uuid()), fc.uuid()) : fc.uuid();
    case 'date-time':
      return fc.date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2060-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'email':
      return fc.emailAddress().filter(fits);
    case 'uri':
      return fc.webUrl().filter(fits);
  }
  if (typeof s.pattern === 'string') return fc.stringMatching(new RegExp(s.pattern)).filter(fits);
  const min: number = s.minLength ?? 0;
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: min, maxLength: Math.min(max, Math.max(min, 24)) }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: min, maxLength: Math.min(max, Math.max(min, 24)) }).filter(fits) },
  );
}

/** A property an object schema declares, at any depth: its path (an array's item as 0) and its schema. */
export interface Field {
  path: (string | number)[];
  schema: Schema;
}

const MAX_FIELD_DEPTH = 4;

/** Every property the schema declares, nested ones and array items included, each once (the first branch's schema wins). */
export function fieldsOf(schema: Schema | undefined, root: Record<string, any>, path: (string | number)[] = []): Field[] {
  if (path.length >= MAX_FIELD_DEPTH) return [];
  const s = flatten(schema, root);
  const found = new Map<string, Field[]>();
  for (const part of branchesOf(s, root) ?? [s]) {
    const children: [string | number, Schema][] = Object.entries((part.properties ?? {}) as Record<string, Schema>);
    if (part.items) children.push([0, part.items as Schema]);
    for (const [key, sub] of children) {
      const at = [...path, key];
      if (!found.has(at.join('.'))) found.set(at.join('.'), [{ path: at, schema: sub }, ...fieldsOf(sub, root, at)]);
    }
  }
  return [...found.values()].flat();
}

/** A copy of the value with the field at `path` set, the objects and arrays on the way made when missing. */
export function withField(value: unknown, path: readonly (string | number)[], field: unknown): unknown {
  if (path.length === 0) return field;
  const [key, ...rest] = path as [string | number, ...(string | number)[]];
  const container = (
    typeof key === 'number' ? (Array.isArray(value) ? [...value] : []) : value && typeof value === 'object' && !Array.isArray(value) ? { ...value } : {}
  ) as Record<string | number, unknown>;
  container[key] = withField(container[key], rest, field);
  return container;
}

/** One value of each JSON type, to offer where the schema allows none of their type. */
const TYPED_SAMPLES: [JsonType, unknown][] = [
  ['null', null],
  ['boolean', true],
  ['boolean', false],
  ['integer', 0],
  ['integer', -1],
  ['number', 1.5],
  ['number', 1e308],
  ['string', ''],
  ['string', 'x'],
  ['string', '1'],
  ['string', 'true'],
  ['array', []],
  ['array', [1, 'x', null]],
  ['object', {}],
  ['object', { a: 1 }],
];

function wrongTypes(types: JsonType[] | undefined): unknown[] {
  if (!types) return [];
  const allows = (type: JsonType) => types.includes(type) || (type === 'integer' && types.includes('number'));
  return TYPED_SAMPLES.filter(([type]) => !allows(type)).map(([, value]) => value);
}

export const BAD_UUIDS = [
  '',
  'not-a-uuid',
  '6f2d8a41-7c3e-4b95-9e1a-2c4d6b8f0e1',
  '6f2d8a41-7c3e-4b95-9e1a-2c4d6b8f0e133',
  '6f2d8a417c3e4b959e1a2c4d6b8f0e13', // PostgreSQL reads it, the contract does not
  '{6f2d8a41-7c3e-4b95-9e1a-2c4d6b8f0e13}',
  'urn:uuid:6f2d8a41-7c3e-4b95-9e1a-2c4d6b8f0e13',
  ' 6f2d8a41-7c3e-4b95-9e1a-2c4d6b8f0e13',
  '6f2d8a41-7c3e-4b95-9e1a-2c4d6b8f0e1g',
  '6f2d8a41-7c3e-4b95-9e1a-2c4d6b8f0e1\u0000',
  '６f2d8a41-7c3e-4b95-9e1a-2c4d6b8f0e13', // a full-width digit
  '6f2d8a41_7c3e_4b95_9e1a_2c4d6b8f0e13',
  '00000000-0000-0000-0000-000000000000', // well-formed, names nothing
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '6F2D8A41-7C3E-4B95-9E1A-2C4D6B8F0E13',
];

const BAD_DATE_TIMES = [
  '',
  'now',
  '2026-12-01',
  '2026-12-01T10:00:00',
  '2026-02-30T10:00:00Z',
  '2026-13-01T00:00:00Z',
  '2026-12-01T24:00:00Z',
  '2026-12-01T23:59:60Z',
  '2026-12-31T23:59:60Z',
  '2026-12-01T10:00:00+25:00',
  '2026-12-01 10:00:00Z',
  '2026-12-01t10:00:00z',
  '2026-12-01T10:00:00,5Z',
  '2026-12-01T10:00:00.1234567891Z',
  '2026-12-01T10:00:00-00:00',
  '2026-W48-1',
  '1764583200',
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00+14:00', // year 0 in UTC
  '1969-12-31T23:59:59.999Z',
  '9999-12-31T23:59:59Z',
  '9999-12-31T23:59:59-14:00', // year 10000 in UTC
  '10000-01-01T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  '2026-12-01T10:00:00Z\u0000',
];

const BAD_EMAILS = [
  '',
  'a',
  'a@',
  '@example.org',
  'a@b',
  'a b@example.org',
  'a@example..org',
  '"a"@example.org',
  'ü@例え.jp',
  'A@EXAMPLE.ORG',
  `${'x'.repeat(65)}@example.org`,
  `a@${'b'.repeat(249)}.org`, // 255 characters
  `a@${'b'.repeat(248)}.org`, // 254: the limit
  'a@example.org\u0000',
];

const BAD_URIS = [
  '',
  'x',
  '//host/app',
  'mailto:a@example.org',
  'javascript:alert(1)',
  'rtmp://',
  'rtmp:///app',
  'http://[::1',
  'http://a b/',
  'file:///etc/passwd',
  'rtmp://host:99999/app',
  'data:,x',
  'rtmp://live.example.org/app\u0000',
  `rtmp://live.example.org/${'a'.repeat(2024)}`, // 2048 characters: the limit
  `rtmp://live.example.org/${'a'.repeat(2025)}`,
];

/** Values that break one constraint of the schema, or stand on one of its edges. */
export function hostile(schema: Schema | undefined, source: SchemaSource, options: HostileOptions = {}, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 0) return hostileOf(schema, source, options, depth);
  return once(options.huge ? 'hostile, huge' : 'hostile', schema, source, () => hostileOf(schema, source, options, 0));
}

function hostileOf(schema: Schema | undefined, source: SchemaSource, options: HostileOptions, depth: number): fc.Arbitrary<unknown> {
  const s = flatten(schema, source.root);
  const types = typesOf(s);
  const arbs: fc.MaybeWeightedArbitrary<unknown>[] = [];
  const wrong = wrongTypes(types);
  if (wrong.length > 0) arbs.push(fc.constantFrom(...wrong));
  if (Array.isArray(s.enum) || 'const' in s) arbs.push(nearMisses(Array.isArray(s.enum) ? s.enum : [s.const]));
  const branches = branchesOf(s, source.root);
  if (branches && depth < MAX_DEPTH) arbs.push(...branches.map((branch) => hostile(branch, source, options, depth + 1)));
  for (const type of types ?? []) arbs.push(...edgesOfType(type, s, source, options, depth));
  if (arbs.length === 0) arbs.push(nastyString, fc.jsonValue({ maxDepth: 3 }), deepNesting);
  return fc.oneof(...arbs);
}

/** Enum and const values changed a little: case, white space, NUL, a prefix. */
function nearMisses(values: unknown[]): fc.Arbitrary<unknown> {
  const strings = values.filter((v): v is string => typeof v === 'string');
  if (strings.length === 0) return fc.constantFrom(...wrongTypes(['null']));
  return fc
    .constantFrom(...strings)
    .chain((value) => fc.constantFrom(value.toUpperCase(), ` ${value}`, `${value} `, `${value}\u0000`, `${value}s`, value.slice(0, -1), `${value}\u200b`));
}

/** `{"a": {"a": …}}` and `[[[…]]]` a thousand levels deep. */
const deepNesting = fc.constantFrom(JSON.parse(`${'{"a":'.repeat(1000)}1${'}'.repeat(1000)}`), JSON.parse(`${'['.repeat(1000)}${']'.repeat(1000)}`));

function edgesOfType(type: JsonType, s: Schema, source: SchemaSource, options: HostileOptions, depth: number): fc.MaybeWeightedArbitrary<unknown>[] {
  switch (type) {
    case 'string':
      return stringEdges(s, options);
    case 'integer':
    case 'number':
      return [numberEdges(s, type)];
    case 'boolean':
      return [fc.constantFrom('true', 'false', 1, 0, 'yes')];
    case 'null':
      return [];
    case 'array':
      return arrayEdges(s, source, options, depth);
    case 'object':
      return depth > MAX_DEPTH ? [] : objectEdges(s, source, options, depth);
  }
}

/** The lists of malformed values by format: weighted up, being what a format check lets through by mistake. */
const FORMAT_EDGES: Record<string, readonly string[]> = { uuid: BAD_UUIDS, 'date-time': BAD_DATE_TIMES, email: BAD_EMAILS, uri: BAD_URIS };

function stringEdges(s: Schema, options: HostileOptions): fc.MaybeWeightedArbitrary<Text>[] {
  const arbs: fc.MaybeWeightedArbitrary<Text>[] = [nastyString];
  if (typeof s.maxLength === 'number') arbs.push(stringOfLength(s.maxLength), stringOfLength(s.maxLength + 1));
  if (typeof s.minLength === 'number' && s.minLength > 0) arbs.push(stringOfLength(s.minLength - 1), stringOfLength(s.minLength));
  const formatEdges = FORMAT_EDGES[s.format as string];
  if (formatEdges) arbs.push({ arbitrary: fc.constantFrom(...formatEdges), weight: 4 });
  if (s.format === 'uuid') arbs.push(fc.uuid().chain(corruptOneCharacter));
  if (typeof s.pattern === 'string') {
    const matching = fc.stringMatching(new RegExp(s.pattern));
    arbs.push(
      fc.tuple(matching, nastyString).map(([text, tail]) => text + tail),
      matching.chain(corruptOneCharacter),
    );
  }
  if (options.huge) arbs.push(hugeString);
  return arbs;
}

/** The text with one character replaced by one of the nasty ones. */
function corruptOneCharacter(text: string): fc.Arbitrary<string> {
  const chars = [...text];
  if (chars.length === 0) return nastyString;
  return fc.tuple(fc.nat(chars.length - 1), nastyString).map(([i, nasty]) => [...chars.slice(0, i), nasty, ...chars.slice(i + 1)].join(''));
}

function numberEdges(s: Schema, type: 'integer' | 'number'): fc.Arbitrary<unknown> {
  const edges: unknown[] = [0, -1, -0, 0.5, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, 1e308, -1e308, 5e-324, '1', '1e3', ' 1', '0x10', '01', 'Infinity', '-0'];
  if (typeof s.minimum === 'number') edges.push(s.minimum - 1, s.minimum, s.minimum - 0.5);
  if (typeof s.maximum === 'number') edges.push(s.maximum, s.maximum + 1, s.maximum + 0.5);
  if (type === 'integer') edges.push(1.0000001, 1 - Number.EPSILON);
  return fc.constantFrom(...edges);
}

function arrayEdges(s: Schema, source: SchemaSource, options: HostileOptions, depth: number): fc.Arbitrary<unknown>[] {
  const item = conforming(s.items, source, depth + 1);
  const arbs: fc.Arbitrary<unknown>[] = [
    fc.array(hostile(s.items, source, options, depth + 1), { minLength: 1, maxLength: 3 }),
    fc.array(fc.array(item, { maxLength: 2 }), { minLength: 1, maxLength: 2 }),
    deepNesting,
  ];
  if (typeof s.maxItems === 'number') {
    arbs.push(fc.array(item, { minLength: s.maxItems, maxLength: s.maxItems }), fc.array(item, { minLength: s.maxItems + 1, maxLength: s.maxItems + 1 }));
  }
  if (typeof s.minItems === 'number' && s.minItems > 0) arbs.push(fc.array(item, { minLength: s.minItems - 1, maxLength: s.minItems - 1 }));
  return arbs;
}

function objectEdges(s: Schema, source: SchemaSource, options: HostileOptions, depth: number): fc.Arbitrary<unknown>[] {
  const properties = Object.keys(s.properties ?? {});
  const base = conforming(s, source, depth) as fc.Arbitrary<Record<string, unknown>>;
  const arbs: fc.Arbitrary<unknown>[] = [
    fc.constant({}),
    deepNesting,
    // unknown fields, `__proto__` among them (an own property in parsed JSON)
    fc
      .tuple(
        base,
        fc.dictionary(fc.oneof(nastyString, fc.constantFrom('__proto__', 'constructor', 'prototype')), fc.jsonValue({ maxDepth: 2 }), {
          minKeys: 1,
          maxKeys: 4,
        }),
      )
      .map(([value, extra]) => ({ ...value, ...extra })),
  ];
  if (properties.length > 0) {
    // one property hostile, the others as they were
    arbs.push(
      fc
        .tuple(base, fc.constantFrom(...properties))
        .chain(([value, name]) => hostile(s.properties[name], source, options, depth + 1).map((bad) => ({ ...value, [name]: bad }))),
    );
  }
  const required: string[] = s.required ?? [];
  if (required.length > 0) {
    arbs.push(fc.tuple(base, fc.constantFrom(...required)).map(([value, name]) => Object.fromEntries(Object.entries(value).filter(([key]) => key !== name))));
  }
  return arbs;
}
