/**
 * Hostile HTTP requests derived from spec/openapi.yaml, for test/property/http-hostile.test.ts.
 *
 * Each operation of the contract is read for its path, query and body schemas. A request starts
 * from a base the operation accepts (the test's fixtures: the ids of a real room and event, a body
 * that works) or from values its schemas accept, and then takes one mutation: a path parameter,
 * query parameter or body field replaced by a hostile value of its schema (schema-values.ts), a
 * query parameter sent twice or unknown ones added, a required field dropped, unknown fields
 * added, a body of the wrong type, malformed JSON, a body at the size limit and one byte over, a
 * wrong Content-Type, no body or an unexpected one, a wrong method, a garbage Authorization
 * header, a tampered cursor. The caller is the fixtures' owner (so that the request reaches
 * validation and the handler), a stranger, a guest with an invite code, nobody, or the bearer of
 * a token the issuer really signed that is no access token of Convene's (`other_client`, `id_token`).
 */
import fc from 'fast-check';
import { openapiDocument } from '../../../generated/openapi-document.js';
import { operations, type OperationId } from '../../../generated/operations.js';
import { BAD_UUIDS, conforming, fieldsOf, hostile, knownId, resolve, withField, type Schema, type SchemaSource } from './schema-values.js';
import { encodeComponent, nastyString, Sized, stringOfLength } from './strings.js';

export interface ParameterShape {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

export interface OperationShape {
  operationId: OperationId;
  method: string;
  /** The full path template, its server included (`/v1/rooms/{room_id}`). */
  path: string;
  parameters: ParameterShape[];
  body?: { mediaType: string; required: boolean; schema: Schema };
  /** The security schemes that admit a caller (any one of them). */
  schemes: string[];
}

const doc = openapiDocument;

/** Every operation of the contract with its parameters, body and security. */
export function contractOperations(): OperationShape[] {
  const rootServer = String(doc.servers?.[0]?.url ?? '').replace(/\/$/, '');
  return (Object.entries(operations) as [OperationId, { method: string; path: string }][]).map(([operationId, { method, path }]) => {
    const item = doc.paths[path];
    const op = item[method];
    const server = String(item.servers?.[0]?.url ?? rootServer).replace(/\/$/, '');
    const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Schema) => {
      const parameter = resolve(p, doc);
      return { name: parameter.name, in: parameter.in, required: parameter.required === true, schema: parameter.schema ?? {} };
    });
    const content = op.requestBody?.content as Record<string, { schema: Schema }> | undefined;
    const mediaType = content ? Object.keys(content)[0]! : undefined;
    return {
      operationId,
      method: method.toUpperCase(),
      path: `${server}${path}`,
      parameters,
      body: mediaType ? { mediaType, required: op.requestBody.required === true, schema: content![mediaType]!.schema } : undefined,
      schemes: ((op.security ?? doc.security ?? []) as Record<string, unknown>[]).flatMap((requirement) => Object.keys(requirement)),
    };
  });
}

/**
 * Who sends a request: `member` is the fixtures' owner (a gateway for the call-in start);
 * `other_client` holds the owner's token issued to another client of the realm (for the call-in
 * start, one carrying the call-in role), `id_token` the owner's ID token.
 */
export type Caller = 'member' | 'stranger' | 'guest' | 'anonymous' | 'garbage' | 'other_client' | 'id_token';

/** The callers holding a token the issuer signed that must open nothing: always 401. */
export const MISAIMED: readonly Caller[] = ['other_client', 'id_token'];

/** What a request starts from: values the operation accepts for the fixtures. */
export interface RequestBase {
  /** Path parameter values, unencoded. */
  path: Record<string, string>;
  /** Query parameters the base request carries. */
  query?: Record<string, string>;
  /** A JSON value, or the bytes of an upload. */
  body?: unknown;
}

export interface RequestSetting {
  source: SchemaSource;
  /** Real page cursors (of every list), to be tampered with and replayed elsewhere. */
  cursors: readonly string[];
  /** The JSON body limit and the upload limit, in bytes. */
  limits: { json: number; upload: number };
}

/** A body sent as it is: malformed JSON, bytes, text of an exact size. Printed short. */
export class RawBody {
  constructor(
    readonly bytes: Buffer,
    readonly label: string,
  ) {}

  [fc.toStringMethod](): string {
    const head = this.bytes.subarray(0, 80).toString('utf8');
    return `raw(${this.label}, ${this.bytes.length} bytes: ${JSON.stringify(head)}${this.bytes.length > 80 ? '…' : ''})`;
  }
}

export interface HostileRequest {
  operationId: OperationId;
  caller: Caller;
  /** A garbage Authorization header (caller `garbage`). */
  authorization?: string;
  method: string;
  /** Each path parameter's segment as sent (encoded). */
  segments: Record<string, string>;
  /** Query parameters in order; a name may repeat. */
  query: [string, unknown][];
  /** The Content-Type header (absent: none). */
  contentType?: string;
  /** A JSON value (serialised on sending) or a RawBody; absent: no body. */
  body?: unknown;
  /** What was made hostile, for the failure message. */
  mutation: string;
}

export interface RawRequest {
  method: string;
  /** Path and query, as sent. */
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** Query values: strings, and what a client might put there instead (numbers, objects as JSON). */
function queryText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Sized) return value.toString();
  if (typeof value === 'object') return JSON.stringify(value);
  const primitive = value as string | number | boolean | bigint; // what is left of unknown, for TypeScript
  return String(primitive);
}

export function render(op: OperationShape, request: HostileRequest): RawRequest {
  const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => request.segments[name] ?? '');
  const query = request.query.map(([name, value]) => `${encodeComponent(name)}=${encodeComponent(queryText(value))}`).join('&');
  const headers: Record<string, string> = {};
  if (request.contentType !== undefined) headers['content-type'] = request.contentType;
  let body: Buffer | undefined;
  if (request.body instanceof RawBody) body = request.body.bytes;
  else if (Buffer.isBuffer(request.body)) body = request.body;
  else if (request.body !== undefined) body = Buffer.from(JSON.stringify(request.body));
  return { method: request.method, target: query ? `${path}?${query}` : path, headers, body };
}

const JSON_TYPE = 'application/json';
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Content types that are not the operation's, or are it in a form the server must refuse or read alike. */
const CONTENT_TYPES = [
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/merge-patch+json',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json; charset=nonsense',
  'APPLICATION/JSON',
  'application/json;;',
  'application/json, text/plain',
  'application/octet-stream',
  '*/*',
  '',
];

const AUTHORIZATIONS = [
  'Bearer',
  'Bearer ',
  'Bearer x',
  'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJzdWItb3duZXIifQ.',
  'Basic b3duZXI6cGFzc3dvcmQ=',
  'InviteCode',
  'InviteCode not-a-code',
  'bearer    ',
  `Bearer ${'a'.repeat(8000)}`,
  'Bearer a.b.c',
  'Bearer ..',
  'Digest x',
];

const A_HUNDRED_THOUSAND_KEYS = Array.from({ length: 100_000 }, (_, i) => `"k${i}":0`).join(',');

/** Malformed or unusual JSON texts, by name, made from a JSON object's members (`inner`) or its whole text. */
const MALFORMED: Record<string, (text: string, inner: string) => string | Buffer> = {
  'trailing garbage': (text) => `${text}x`,
  'two documents': (text) => `${text}${text}`,
  'byte order mark': (text) => `\ufeff${text}`,
  comment: (text) => `/* c */${text}`,
  'single quotes': (text) => text.replaceAll('"', "'"),
  NaN: (_, inner) => `{"a":NaN,${inner}}`,
  'number overflowing to Infinity': (_, inner) => `{${inner},"a":1e400}`,
  'integer beyond 2^53': (_, inner) => `{${inner},"a":123456789012345678901234567890}`,
  'duplicate keys': (_, inner) => `{${inner},${inner}}`,
  'raw control character in a string': (_, inner) => `{"a":"x\u0001y",${inner}}`,
  'lone surrogate escape': (_, inner) => `{"a":"\\ud800",${inner}}`,
  'NUL escape': (_, inner) => `{"a":"\\u0000",${inner}}`,
  'invalid UTF-8': (_, inner) => Buffer.concat([Buffer.from(`{"a":"`), Buffer.from([0xff, 0xfe, 0xc0, 0xaf]), Buffer.from(`",${inner}}`)]),
  'UTF-16': (text) => Buffer.from(text, 'utf16le'),
  empty: () => '',
  'white space': () => '   \n',
  'deeply nested arrays': (_, inner) => `{${inner},"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
  'deeply nested objects': (_, inner) => `{${inner},"a":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`,
  'a hundred thousand keys': (_, inner) => `{${inner},${A_HUNDRED_THOUSAND_KEYS}}`,
  'top-level null': () => 'null',
  'top-level string': () => '"x"',
  'top-level number': () => '1',
};

/** Malformed or unusual JSON texts made from a JSON text the operation accepts (built only once chosen). */
function malformedJson(text: string): fc.Arbitrary<RawBody> {
  const inner = text.startsWith('{') && text.length > 2 ? text.slice(1, -1) : '"a":1';
  const raw = (label: string, value: string | Buffer) => new RawBody(Buffer.isBuffer(value) ? value : Buffer.from(value), label);
  return fc.oneof(
    fc.nat(Math.max(0, text.length - 1)).map((cut) => raw('truncated', text.slice(0, cut))),
    fc.constantFrom(...Object.keys(MALFORMED)).map((label) => raw(label, MALFORMED[label]!(text, inner))),
  );
}

/** A JSON text of exactly `size` bytes: the body, padded by an unknown field (or a bare string when the body is no object). */
function jsonOfSize(value: unknown, size: number): RawBody {
  const text = JSON.stringify(value ?? {});
  const object = text.startsWith('{');
  const open = object ? '{"_":"' : '"';
  const close = object ? (text === '{}' ? '"}' : `",${text.slice(1)}`) : '"';
  const padding = Math.max(0, size - Buffer.byteLength(open) - Buffer.byteLength(close));
  return new RawBody(Buffer.from(`${open}${'x'.repeat(padding)}${close}`), `JSON of ${size} bytes`);
}

/** Path segments that break a path: bad ids, other things' ids, escapes that decode to nothing good. */
function hostileSegment(valid: string, source: SchemaSource): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...BAD_UUIDS).map(encodeComponent),
    fc.uuid(),
    knownId(source, fc.constant(valid)),
    nastyString.map(encodeComponent),
    fc.constantFrom('%', '%zz', '%2F', '%2e%2e', '..', '.', '%00', '%C0%AF', '%ED%A0%80', ';', 'a;b=c', '%20', '%u0041', '+'),
    stringOfLength(300).map((text) => encodeComponent(String(text))),
    fc.constantFrom(valid.toUpperCase(), `${valid}%20`, `${valid}%00`, `${valid};x`, `${valid}.json`),
  );
}

/** Cursors: real ones (of this list or another), altered, cut, lengthened, or made up. */
function hostileCursor(cursors: readonly string[]): fc.Arbitrary<string> {
  const real = cursors.length > 0 ? fc.constantFrom(...cursors) : fc.constant('e30.AAAA');
  return fc.oneof(
    real,
    real.chain((cursor) => fc.nat(cursor.length - 1).map((i) => `${cursor.slice(0, i)}${cursor[i] === 'A' ? 'B' : 'A'}${cursor.slice(i + 1)}`)),
    real.chain((cursor) => fc.nat(cursor.length - 1).map((i) => cursor.slice(0, i))),
    real.map((cursor) => `${cursor}.x`),
    real.map((cursor) => `${cursor}${'A'.repeat(512 - cursor.length)}`),
    real.map((cursor) => `${cursor}${'A'.repeat(513 - cursor.length)}`),
    real.map((cursor) => `${Buffer.from('{"k":"events","s":null,"c":"x","i":"y"}').toString('base64url')}.${cursor.split('.')[1] ?? ''}`),
    fc.constantFrom('.', '..', 'x.', '.x', 'e30', 'e30.', 'bnVsbA.AAAAAAAAAAAAAAAAAAAAAA', '%', '\u0000'),
    fc.base64String({ maxLength: 64 }),
    nastyString,
  );
}

const CURSOR_PARAMETERS = new Set(['after', 'cursor']);

/**
 * The arbitrary of hostile requests for one operation. `fixtures` gives, when each request is
 * generated (fixtures may be replaced between requests), values the operation accepts; each
 * request takes exactly one mutation of them (or none: a valid request with generated values,
 * which may succeed).
 */
export function hostileRequests(op: OperationShape, fixtures: () => { base: RequestBase; setting: RequestSetting }): fc.Arbitrary<HostileRequest> {
  return fc.constant(null).chain(() => {
    const { base, setting } = fixtures();
    return requestsOf(op, base, setting);
  });
}

function requestsOf(op: OperationShape, base: RequestBase, setting: RequestSetting): fc.Arbitrary<HostileRequest> {
  const { source } = setting;
  const pathParameters = op.parameters.filter((p) => p.in === 'path');
  const queryParameters = op.parameters.filter((p) => p.in === 'query');
  const json = op.body?.mediaType === JSON_TYPE;
  const upload = op.body?.mediaType === 'application/octet-stream';
  const hostileQuery = (p: ParameterShape) => (CURSOR_PARAMETERS.has(p.name) ? hostileCursor(setting.cursors) : hostile(p.schema, source));
  const conformingQuery = (p: ParameterShape) =>
    CURSOR_PARAMETERS.has(p.name) && setting.cursors.length > 0 ? fc.constantFrom(...setting.cursors) : conforming(p.schema, source);

  const others: Caller[] = [
    'stranger',
    'anonymous',
    ...(op.schemes.includes('InviteCode') ? (['guest'] as const) : []),
    ...(op.schemes.length > 0 ? MISAIMED : []),
  ];
  const caller = fc.oneof({ weight: 8, arbitrary: fc.constant<Caller>('member') }, { weight: 2, arbitrary: fc.constantFrom(...others) });

  // the base: the fixtures' path values; query parameters from the base, or some generated; the base body or a generated one
  const queryBase = fc
    .tuple(
      ...queryParameters.map((p) =>
        base.query?.[p.name] !== undefined ? fc.constant(base.query[p.name]) : p.required ? conformingQuery(p) : fc.option(conformingQuery(p), { freq: 3 }),
      ),
    )
    .map((values) => queryParameters.flatMap((p, i) => (values[i] === null || values[i] === undefined ? [] : [[p.name, values[i]] as [string, unknown]])));
  const bodyBase: fc.Arbitrary<unknown> = !op.body
    ? fc.constant(undefined)
    : upload
      ? fc.oneof(
          fc.constant(base.body),
          fc.uint8Array({ minLength: 1, maxLength: 256 }).map((bytes) => Buffer.from(bytes)),
        )
      : base.body !== undefined
        ? fc.oneof({ weight: 3, arbitrary: fc.constant(base.body) }, { weight: 1, arbitrary: conforming(op.body.schema, source) })
        : conforming(op.body.schema, source);

  return fc.record({ caller, query: queryBase, body: bodyBase }).chain(({ caller, query, body }) => {
    const request: HostileRequest = {
      operationId: op.operationId,
      caller,
      method: op.method,
      segments: Object.fromEntries(pathParameters.map((p) => [p.name, encodeComponent(base.path[p.name] ?? '')])),
      query,
      ...(op.body && body !== undefined ? { contentType: op.body.mediaType, body } : {}),
      mutation: 'none',
    };
    const mutations: fc.Arbitrary<HostileRequest>[] = [fc.constant(request)];
    const withQuery = (name: string, values: unknown[], label: string) => ({
      ...request,
      query: [...request.query.filter(([n]) => n !== name), ...values.map((v) => [name, v] as [string, unknown])],
      mutation: label,
    });

    for (const p of pathParameters) {
      mutations.push(
        hostileSegment(request.segments[p.name]!, source).map((segment) => ({
          ...request,
          segments: { ...request.segments, [p.name]: segment },
          mutation: `path ${p.name}`,
        })),
      );
    }
    for (const p of queryParameters) {
      mutations.push(
        hostileQuery(p).map((value) => withQuery(p.name, [value], `query ${p.name}`)),
        fc
          .tuple(fc.oneof(conformingQuery(p), hostileQuery(p)), fc.oneof(conformingQuery(p), hostileQuery(p)))
          .map((values) => withQuery(p.name, values, `query ${p.name} twice`)),
      );
    }
    if (queryParameters.length > 0 && query.length > 0) {
      mutations.push(fc.constantFrom(...query).map(([name, value]) => withQuery(name, [value, value], `query ${name} twice, equal`)));
    }
    mutations.push(
      fc
        .array(fc.tuple(fc.oneof(nastyString, fc.constantFrom('per_page[]', 'a[b]', '__proto__', 'constructor')), fc.oneof(nastyString, fc.constant(''))), {
          minLength: 1,
          maxLength: 3,
        })
        .map((extra) => ({
          ...request,
          query: [...request.query, ...extra],
          mutation: 'unknown query parameters',
        })),
      fc.constantFrom(...AUTHORIZATIONS).map((authorization) => ({ ...request, caller: 'garbage' as const, authorization, mutation: 'authorization' })),
      fc.constantFrom(...METHODS.filter((m) => m !== op.method)).map((method) => ({ ...request, method, mutation: 'method' })),
    );

    if (json && op.body) {
      const schema = op.body.schema;
      const text = JSON.stringify(body ?? {});
      // each field of the body on its own, at any depth: where the handlers' own checks are
      for (const field of fieldsOf(schema, source.root)) {
        const label = `body field ${field.path.join('.')}`;
        mutations.push(
          hostile(field.schema, source, { huge: true }).map((value) => ({
            ...request,
            contentType: JSON_TYPE,
            body: withField(body, field.path, value),
            mutation: label,
          })),
        );
      }
      mutations.push(
        hostile(schema, source, { huge: true }).map((value) => ({ ...request, contentType: JSON_TYPE, body: value, mutation: 'body value' })),
        malformedJson(text).map((raw) => ({ ...request, contentType: JSON_TYPE, body: raw, mutation: `body ${raw.label}` })),
        fc
          .constantFrom(setting.limits.json, setting.limits.json + 1)
          .map((size) => ({ ...request, contentType: JSON_TYPE, body: jsonOfSize(body, size), mutation: `body of ${size} bytes` })),
        fc
          .constantFrom(...CONTENT_TYPES)
          .map((contentType) => ({ ...request, contentType, body: new RawBody(Buffer.from(text), 'the base body'), mutation: 'content type' })),
        fc.constant({ ...request, contentType: undefined, body: new RawBody(Buffer.from(text), 'the base body'), mutation: 'body without content type' }),
        fc.constant({ ...request, contentType: undefined, body: undefined, mutation: 'no body' }),
        fc.constant({ ...request, contentType: JSON_TYPE, body: new RawBody(Buffer.alloc(0), 'empty'), mutation: 'empty JSON body' }),
      );
    } else if (upload) {
      mutations.push(
        fc.constantFrom(0, 1, setting.limits.upload, setting.limits.upload + 1).map((size) => ({
          ...request,
          body: new RawBody(Buffer.alloc(size, 0x5a), `upload of ${size} bytes`),
          mutation: `upload of ${size} bytes`,
        })),
        fc.constantFrom(...CONTENT_TYPES, JSON_TYPE).map((contentType) => ({ ...request, contentType, mutation: 'content type' })),
        fc.constant({ ...request, contentType: undefined, body: undefined, mutation: 'no body' }),
      );
    } else {
      // a body the operation does not take (GET too): ignored, or refused with the error body, never more
      mutations.push(
        fc
          .oneof(
            fc.jsonValue({ maxDepth: 2 }).map((value) => ({ type: JSON_TYPE, body: new RawBody(Buffer.from(JSON.stringify(value ?? null)), 'JSON') })),
            malformedJson('{"a":1}').map((body) => ({ type: JSON_TYPE, body })),
            fc.constant({ type: JSON_TYPE, body: jsonOfSize({}, setting.limits.json + 1) }),
            fc.constantFrom(...CONTENT_TYPES).map((type) => ({ type, body: new RawBody(Buffer.from('{"a":1}'), 'JSON') })),
          )
          .map(({ type, body }) => ({ ...request, contentType: type, body, mutation: `unexpected body (${type})` })),
      );
    }
    return fc.oneof(...mutations.map((arbitrary, i) => ({ arbitrary, weight: i === 0 ? 2 : 1 })));
  });
}
