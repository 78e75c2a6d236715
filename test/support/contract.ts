/**
 * Checks an HTTP answer against spec/openapi.yaml: its status must be declared for the operation
 * (501 is allowed for operations that are not built yet, with the error body), its body must match
 * the declared schema exactly, and a JSON body must be sent as application/json.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openapiDocument } from '../../generated/openapi-document.js';
import { operations, type OperationId } from '../../generated/operations.js';

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats.default(ajv);
ajv.addSchema(openapiDocument, 'openapi.json');

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

const cache = new Map<string, ValidateFunction>();
function validatorFor(ref: string): ValidateFunction {
  let v = cache.get(ref);
  if (!v) cache.set(ref, (v = ajv.compile({ $ref: ref })));
  return v;
}

function resolve(obj: any): any {
  while (obj && typeof obj.$ref === 'string') {
    const path = obj.$ref
      .replace(/^#\//, '')
      .split('/')
      .map((s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    obj = path.reduce((o: any, k: string) => o?.[k], openapiDocument);
  }
  return obj;
}

export class ContractViolation extends Error {}

export interface CheckedResponse {
  status: number;
  contentType: string | null;
  body: string;
}

export function operationFor(method: string, template: string): OperationId {
  const m = method.toLowerCase();
  const found = Object.entries(operations).find(([, o]) => o.method === m && o.path === template);
  if (!found) throw new ContractViolation(`no operation ${method} ${template} in the contract`);
  return found[0] as OperationId;
}

/** Throws ContractViolation when the answer does not satisfy the contract. */
export function checkResponse(operationId: OperationId, res: CheckedResponse): void {
  const { method, path } = operations[operationId];
  const responses = openapiDocument.paths[path][method].responses as Record<string, any>;
  let declared = responses[String(res.status)];
  let ref = `openapi.json#/${pointer('paths', path, method, 'responses', String(res.status))}`;
  if (!declared && res.status === 501) {
    declared = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    ref = '';
  }
  if (!declared) {
    throw new ContractViolation(`${operationId} answered ${res.status}, which the contract does not declare: ${res.body.slice(0, 300)}`);
  }
  if (declared.$ref) ref = `openapi.json${declared.$ref}`;
  const response = resolve(declared);
  const content = response.content as Record<string, unknown> | undefined;
  if (!content) {
    if (res.body.length > 0) throw new ContractViolation(`${operationId} ${res.status} must have no body, got: ${res.body.slice(0, 200)}`);
    return;
  }
  const mediaType = Object.keys(content)[0]!;
  if (!res.contentType?.toLowerCase().startsWith(mediaType)) {
    throw new ContractViolation(`${operationId} ${res.status} must be ${mediaType}, was ${res.contentType}`);
  }
  if (mediaType !== 'application/json') return;
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    throw new ContractViolation(`${operationId} ${res.status} sent invalid JSON: ${res.body.slice(0, 200)}`);
  }
  const schemaRef = ref === '' ? 'openapi.json#/components/schemas/Error' : `${ref}/content/${pointer(mediaType)}/schema`;
  const validate = validatorFor(schemaRef);
  if (!validate(body)) {
    throw new ContractViolation(
      `${operationId} ${res.status} body does not match the contract: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`,
    );
  }
}

/**
 * Throws ContractViolation when a webhook delivery (its type from the body) does not match the
 * contract's `webhooks` entry: the body its schema, each declared header its parameter's schema.
 */
export function checkWebhook(headers: Record<string, string | string[] | undefined>, body: string): void {
  let parsed: { type?: unknown };
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new ContractViolation(`a webhook body is not JSON: ${body.slice(0, 200)}`);
  }
  const type = String(parsed.type);
  const operation = (openapiDocument as { webhooks?: Record<string, { post: any }> }).webhooks?.[type]?.post;
  if (!operation) throw new ContractViolation(`no webhook ${type} in the contract`);
  const base = `openapi.json#/${pointer('webhooks', type, 'post')}`;
  const validate = validatorFor(`${base}/requestBody/content/${pointer('application/json')}/schema`);
  if (!validate(parsed)) throw new ContractViolation(`webhook ${type} body does not match the contract: ${ajv.errorsText(validate.errors)}`);
  for (const declared of operation.parameters as unknown[]) {
    const parameter = resolve(declared);
    const value = headers[parameter.name];
    if (typeof value !== 'string') throw new ContractViolation(`webhook ${type} lacks the header ${parameter.name}`);
    const check = ajv.compile(parameter.schema);
    if (!check(value)) throw new ContractViolation(`webhook ${type} header ${parameter.name}: ${ajv.errorsText(check.errors)}`);
  }
}
