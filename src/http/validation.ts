/**
 * Request validation by the contract. openapi-backend compiles one Ajv validator per operation from
 * spec/openapi.yaml (via generated/openapi-document.js); we resolve the operation ourselves (routes.ts)
 * and hand it over, so its per-request path scan never runs. Ajv errors become the `errors[]` of a
 * 400 `validation_failed`. Unknown query parameters are ignored, as unknown body fields are; what
 * the schema admits but PostgreSQL cannot take (a `urn:uuid:` id) is refused; text it cannot hold, in app.ts.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
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
export interface ValidatedRequest {
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
  /** `params`: the path parameters as the route table decoded them; `body`: a parsed JSON body, else undefined. */
  validate(
    operation: Operation,
    request: { params: Record<string, string>; headers: Record<string, string | string[] | undefined>; query: Record<string, unknown>; body: unknown },
  ): ValidatedRequest;
}

/** One operation's compiled validators and what its parameters need before they run. */
interface OperationPlan {
  validators: ValidateFunction[];
  /** Path parameter names, in the template's order. */
  pathNames: string[];
  queryNames: Set<string>;
  /** Header parameters are coerced in place: they get a copy of the request's headers. */
  copyHeaders: boolean;
  /**
   * A parameter openapi-backend reshapes before validating (a query parameter that is an array, not
   * exploded or JSON content; a cookie): that operation goes through its validateRequest. The
   * contract has none today.
   */
  reshaped: boolean;
  declaredFields: DeclaredFields | undefined;
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
  const plans = new Map<string, OperationPlan>();
  const planOf = (op: Operation) => {
    let plan = plans.get(op.operationId!);
    if (!plan) plans.set(op.operationId!, (plan = planOperation(definition, op, backend.validator.getRequestValidatorsForOperation(op.operationId!))));
    return plan;
  };

  return {
    operation(operationId) {
      const op = operations.get(operationId);
      if (!op) throw new Error(`unknown operation ${operationId}`);
      return op;
    },
    async warmUp() {
      for (const operation of operations.values()) {
        planOf(operation);
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    validate(operation, request) {
      const plan = planOf(operation);
      const valid = plan.reshaped ? validateThroughBackend(backend, operation, plan, request) : validateWithPlan(plan, request);
      requireDeclaredFields(plan.declaredFields, request.body);
      return valid;
    },
  };
}

function planOperation(definition: object, op: Operation, validators: ValidateFunction[]): OperationPlan {
  // openapi-backend has dereferenced every parameter by now
  const parameters = (op.parameters ?? []) as { in?: string; name: string; explode?: boolean; content?: unknown; schema?: { type?: unknown } }[];
  // what its parseRequest and validateRequest rewrite: JSON content, non-exploded lists, a single value of an array
  const reshapedQuery = (p: (typeof parameters)[number]) => p.in === 'query' && (p.content !== undefined || p.explode === false || p.schema?.type === 'array');
  return {
    validators,
    pathNames: [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
    queryNames: declaredQueryNames(op),
    copyHeaders: parameters.some((p) => p.in === 'header'),
    reshaped: parameters.some((p) => p.in === 'cookie' || reshapedQuery(p)),
    declaredFields: bodyFieldsRule(definition, op),
  };
}

/**
 * What openapi-backend's validateRequest does for an operation without reshaped parameters, less
 * its per-request parsing (lodash copies of headers and query, cookie parsing, the path template
 * matched again): the object its compiled validators read, built from what routing already has,
 * and its validators run in its order, their errors collected as it collects them.
 */
function validateWithPlan(plan: OperationPlan, request: Parameters<RequestValidator['validate']>[1]): ValidatedRequest {
  const path: Record<string, string> = {};
  // openapi-backend read the parameters from the path as sent, still percent-encoded: handlers get them so
  for (const name of plan.pathNames) path[name] = encodeURIComponent(request.params[name] ?? '');
  const parameters: Record<string, unknown> = {
    path,
    query: declaredOnly(request.query, plan.queryNames),
    header: plan.copyHeaders ? { ...request.headers } : request.headers,
    cookie: {},
  };
  if (request.body !== undefined) parameters.requestBody = request.body;
  let failures: ErrorObject[] | undefined;
  for (const validate of plan.validators) {
    if (!validate(parameters)) (failures ??= []).push(...(validate.errors ?? []));
  }
  if (failures) throw errors.validationFailed(toFieldErrors(failures));
  return { params: path, query: parameters.query as Record<string, unknown> };
}

/** The general way, for an operation whose parameters openapi-backend reshapes. */
function validateThroughBackend(
  backend: OpenAPIBackend,
  operation: Operation,
  plan: OperationPlan,
  { params, headers, query, body }: Parameters<RequestValidator['validate']>[1],
): ValidatedRequest {
  const path = operation.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(params[name] ?? ''));
  const request = { method: operation.method, path, headers, query: declaredOnly(query, plan.queryNames), body };
  const result = backend.validator.validateRequest(request as Request, operation);
  if (!result.valid) throw errors.validationFailed(toFieldErrors(result.errors ?? []));
  return {
    params: result.coerced?.params ?? {},
    query: (result.coerced?.query as Record<string, unknown> | undefined) ?? {},
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
  for (const name of names) {
    // a copy of a repeated parameter's array: the validators coerce in place
    if (Object.hasOwn(query, name)) kept[name] = Array.isArray(query[name]) ? [...(query[name] as unknown[])] : query[name];
  }
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
