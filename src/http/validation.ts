/**
 * Request validation by the contract. openapi-backend compiles one Ajv validator per operation from
 * spec/openapi.yaml (via generated/openapi-document.js); we resolve the operation ourselves (routes.ts)
 * and hand it over, so its per-request path scan never runs. Ajv errors become the `errors[]` of a
 * 400 `validation_failed`. Unknown query parameters are ignored, as unknown body fields are; what
 * the schema admits but PostgreSQL cannot take (a `urn:uuid:` id) is refused; text it cannot hold, in app.ts.
 */
import type { ErrorObject } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, type Operation, type Request } from 'openapi-backend';
import { errors, type FieldError } from '../errors.js';
import { UUID_PATTERN } from '../domain/uuid.js';

/** openapi-backend checks documents against the OAS 3.0 meta-schema; ours is 3.1 and linted by Redocly instead. */
class OpenApi31Backend extends OpenAPIBackend {
  override validateDefinition() {
    return this.document;
  }
}

/** The coerced path parameters and query; a JSON body is validated where it lies (Ajv fills its defaults in place). */
interface ValidatedRequest {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
}

export interface RequestValidator {
  operation(operationId: string): Operation;
  /**
   * Compiles every operation's validators, one per turn of the event loop. Compiling them all at
   * once takes ~3.7 s here (each operation's schemas are dereferenced and compiled on their own), so
   * the server starts with lazy compilation and warms up right after it listens.
   */
  warmUp(): Promise<void>;
  validate(
    operation: Operation,
    request: { method: string; path: string; headers: Record<string, string | string[] | undefined>; query: Record<string, unknown>; body: unknown },
  ): ValidatedRequest;
}

export async function createRequestValidator(definition: object): Promise<RequestValidator> {
  const backend = new OpenApi31Backend({
    definition: structuredClone(definition) as never,
    apiRoot: '/',
    strict: true,
    quick: true, // lazy compilation: see warmUp()
    validate: true,
    coerceTypes: true,
    ajvOpts: { allErrors: true, useDefaults: true },
    customizeAjv: (_ajv, options) => {
      // 2020-12 keywords (OpenAPI 3.1), real format checks (uuid, date-time, email, uri).
      const ajv = new Ajv2020({ ...options, strict: false, allErrors: true, useDefaults: true, coerceTypes: options.coerceTypes });
      addFormats.default(ajv);
      // ajv-formats also takes `urn:uuid:…`, which PostgreSQL's uuid type does not read (a 500, not a 400)
      ajv.addFormat('uuid', UUID_PATTERN);
      // an Ajv2020 is not an instance of the Ajv class openapi-backend names, but has the same API (both extend ajv's core)
      // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- see above
      return ajv;
    },
  });
  await backend.init();
  const operations = new Map(backend.router.getOperations().map((op) => [op.operationId!, op]));
  const declaredFields = new Map<string, DeclaredFields | undefined>();
  const declaredFieldsOf = (op: Operation) => {
    if (!declaredFields.has(op.operationId!)) declaredFields.set(op.operationId!, bodyFieldsRule(definition, op));
    return declaredFields.get(op.operationId!);
  };
  const queryNames = new Map<string, Set<string>>();
  const queryNamesOf = (op: Operation) => {
    let names = queryNames.get(op.operationId!);
    if (!names) queryNames.set(op.operationId!, (names = declaredQueryNames(op)));
    return names;
  };

  return {
    operation(operationId) {
      const op = operations.get(operationId);
      if (!op) throw new Error(`unknown operation ${operationId}`);
      return op;
    },
    async warmUp() {
      for (const operationId of operations.keys()) {
        backend.validator.getRequestValidatorsForOperation(operationId);
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    validate(operation, request) {
      const query = declaredOnly(request.query, queryNamesOf(operation));
      const result = backend.validator.validateRequest({ ...request, query } as Request, operation);
      if (!result.valid) throw errors.validationFailed(toFieldErrors(result.errors ?? []));
      requireDeclaredFields(declaredFieldsOf(operation), request.body);
      return {
        params: result.coerced?.params ?? {},
        query: (result.coerced?.query as Record<string, unknown> | undefined) ?? {},
      };
    },
  };
}

const CODES: Record<string, string> = {
  maxLength: 'invalid_length',
  minLength: 'invalid_length',
  maximum: 'out_of_range',
  minimum: 'out_of_range',
  exclusiveMaximum: 'out_of_range',
  exclusiveMinimum: 'out_of_range',
  maxItems: 'too_many_items',
  minItems: 'too_few_items',
  required: 'value_required',
  minProperties: 'missing_values',
  format: 'invalid_format',
  pattern: 'invalid_format',
  type: 'invalid_type',
  enum: 'invalid_value',
  const: 'invalid_value',
  additionalProperties: 'unknown_field',
  uniqueItems: 'duplicate_items',
  parse: 'invalid_json',
};

/** Ajv's instancePath (`/requestBody/starts_at/datetime`, `/query/per_page`) → `starts_at.datetime`, `per_page`. */
function toFieldErrors(list: ErrorObject[]): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of list) {
    // oneOf/anyOf/if wrappers repeat what their branches already said
    if (e.keyword === 'oneOf' || e.keyword === 'anyOf' || e.keyword === 'if' || e.keyword === 'not') continue;
    const segments = e.instancePath.split('/').slice(1).map(unescapePointer);
    if (['requestBody', 'query', 'path', 'header', 'cookie'].includes(segments[0] ?? '')) segments.shift();
    if (e.keyword === 'required') segments.push(String((e.params as { missingProperty?: string }).missingProperty));
    if (e.keyword === 'additionalProperties') segments.push(String((e.params as { additionalProperty?: string }).additionalProperty));
    const field = segments.join('.') || undefined;
    const code =
      e.keyword === 'format' ? `invalid_${(e.params as { format?: string }).format ?? 'format'}`.replace(/-/g, '_') : (CODES[e.keyword] ?? 'invalid_value');
    const key = `${field}|${code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(field === undefined ? { code, message: e.message ?? code } : { field, code, message: e.message ?? code });
  }
  return out.length > 0 ? out : [{ code: 'invalid_value', message: 'The request does not match the contract' }];
}

function unescapePointer(s: string): string {
  return s.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The names of the operation's query parameters (path-level ones included). */
function declaredQueryNames(op: Operation): Set<string> {
  // a `$ref` parameter has no `in`: openapi-backend has dereferenced them all by now
  return new Set(((op.parameters ?? []) as { in?: string; name: string }[]).flatMap((p) => (p.in === 'query' ? [p.name] : [])));
}

/**
 * Unknown query parameters are ignored, as unknown body fields are: clients and proxies add their
 * own (cache busters on a health check), and refusing them would break a probe, not protect anything.
 */
function declaredOnly(query: Record<string, unknown>, names: Set<string>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const name of names) if (Object.hasOwn(query, name)) kept[name] = query[name];
  return kept;
}

/** A JSON body schema's `minProperties` and the fields it declares. */
interface DeclaredFields {
  min: number;
  names: string[];
}

/** The parts of a (possibly `$ref`) JSON Schema that bodyFieldsRule reads. */
interface SchemaNode {
  $ref?: unknown;
  minProperties?: number;
  properties?: Record<string, unknown>;
}

type JsonNode = Record<string, unknown> | null | undefined;

function bodyFieldsRule(definition: object, op: Operation): DeclaredFields | undefined {
  const requestBody = op.requestBody as { content?: Record<string, { schema?: SchemaNode } | undefined> } | undefined;
  let schema = requestBody?.content?.['application/json']?.schema;
  while (typeof schema?.$ref === 'string') {
    schema = schema.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((node, key) => (node as JsonNode)?.[key], definition) as SchemaNode | undefined;
  }
  if (!schema?.minProperties || !schema.properties) return undefined;
  return { min: schema.minProperties, names: Object.keys(schema.properties) };
}

/**
 * Unknown fields are ignored (docs/decisions.md), so `minProperties` counts only the declared ones: a
 * body of unknown fields alone asks for as little as `{}` and is refused the same way.
 */
function requireDeclaredFields(rule: DeclaredFields | undefined, body: unknown): void {
  if (!rule || typeof body !== 'object' || body === null) return;
  const given = rule.names.filter((name) => (body as Record<string, unknown>)[name] !== undefined).length;
  if (given < rule.min) {
    throw errors.validationFailed([{ field: 'body', code: 'missing_values', message: `The body must set at least one of: ${rule.names.join(', ')}` }]);
  }
}
