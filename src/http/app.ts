/**
 * The HTTP edge: Express 5 hands every request to the contract. Each request is routed once through
 * the route table built from spec/openapi.yaml, authenticated by the operation's `security`,
 * validated by openapi-backend with that operation's compiled validators, and answered by the
 * handler registered for its operationId. Every error leaves through one renderer.
 */
import cors from 'cors';
import express, { type NextFunction, type Request, type Response } from 'express';
import proxyaddr from 'proxy-addr';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { openapiDocument } from '../../generated/openapi-document.js';
import { operations, type OperationId } from '../../generated/operations.js';
import type { Config } from '../config/schema.js';
import { trustedProxies } from '../config/trust-proxy.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { resolveCaller, type AuthDeps, type SecurityRequirement } from './auth.js';
import { docsRouter } from './docs.js';
import { DomainError, errors, type FieldError, type Unreachable } from '../errors.js';
import { httpError } from './errors.js';
import type { Handler, Handlers } from './handler-types.js';
import { requestLogger } from './request-log.js';
import { RouteTable } from './routes.js';
import { createRequestValidator } from './validation.js';
import { isUuid } from '../domain/uuid.js';

export interface Route {
  operationId: OperationId;
  /** Upper case, as the contract names it (a HEAD request is routed to the GET). */
  method: string;
  template: string;
  security: SecurityRequirement[];
  body?: { mediaType: string; required: boolean };
}

export interface HttpAppOptions {
  config: Config;
  logger: Logger;
  auth: AuthDeps;
  handlers: Handlers<OperationId>;
  /** The instance's registry: requests are counted into it, and `/metrics` serves it. */
  metrics: Metrics;
  /** Which backing service, if any, an error says cannot be reached (answered 503). */
  unreachable: Unreachable;
  /** Extra routers mounted before the contract (e.g. the development identity provider at /dev-idp). */
  extraRouters?: { path: string; router: express.Router }[];
}

export interface HttpApp {
  app: express.Express;
  /** Compiles every operation's request validators ahead of their first request (see validation.ts). */
  warmUp(): Promise<void>;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export async function createHttpApp(options: HttpAppOptions): Promise<HttpApp> {
  const { config, logger, auth, handlers, metrics } = options;
  const routes = buildRoutes(openapiDocument);
  const validator = await createRequestValidator(openapiDocument);
  for (const route of routes.list) {
    if (typeof handlers[route.operationId] !== 'function') throw new Error(`no handler for ${route.operationId}`);
    validator.operation(route.operationId); // fails at start-up, not on first use, if the spec and the code disagree
  }

  const app = express();
  app.disable('x-powered-by');
  // the one reading of `[http] trust_proxy`, shared with the signaling upgrade (socket-caps.ts)
  app.set('trust proxy', trustedProxies(config.http.trust_proxy));
  app.set('query parser', 'simple');
  // No ETag: the contract declares none, and express hashed every JSON body for it (a year's page
  // of events is 124 KB) only to compare it with an If-None-Match no client sends.
  app.set('etag', false);

  // One middleware for what every request gets (each Express layer costs a request its matching)
  const logRequest = requestLogger(logger, { accessLog: config.logging.access_log });
  const corsHeaders = corsMiddleware(config.cors.origins);
  app.use((req, res, next) => {
    // every answer: a browser must not sniff an error body or an upload into HTML
    res.setHeader('x-content-type-options', 'nosniff');
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = id;
    res.setHeader('x-request-id', id);
    logRequest(req, res, () => corsHeaders(req, res, next));
  });

  // The contract's operations before the other paths, which a request of the contract need not be
  // matched against (none of them is a path of the contract); a request of none goes on to them.
  const parseJson = express.json({ limit: config.http.body_limit_bytes, type: ['application/json', 'application/*+json'] });
  // uploads (assets) arrive as raw bytes; their own, larger limit is the assets configuration's
  const parseRaw = express.raw({ limit: config.assets.max_upload_bytes, type: 'application/octet-stream' });
  app.use((req: Request, res: Response, next: NextFunction) => {
    const match = matchRoute(routes.table, req.method, req.path);
    if (!match.route) {
      res.locals.match = match;
      return next();
    }
    const route = match.route;
    noStore(res);
    const answer = () => answerOperation(req, res, route, match.params).catch(next);
    // a body parsed only for an operation that takes one: a body sent to any other is ignored (Node
    // discards it), rather than answered 413 or 415, which its contract lacks
    if (!route.body) return void answer();
    // Express's req and res are Node's IncomingMessage and ServerResponse, their prototypes extended
    // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- see above
    parseJson(req, res, (err?: unknown) => (err ? next(err) : parseRaw(req, res, (rawErr?: unknown) => (rawErr ? next(rawErr) : void answer()))));
  });

  // counted from here, once the body is in: a body that does not parse is not counted (nor was it before)
  const answerOperation = async (req: Request, res: Response, route: Route, params: Record<string, string>) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      metrics.observeRequest(route.operationId, req.method, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
    });
    // the source of failed invite codes: req.ip honours `[http] trust_proxy`
    const caller = await resolveCaller(route.security, req.headers.authorization, auth, () => req.ip ?? req.socket.remoteAddress ?? 'unknown');
    checkBody(req, route);
    const json = route.body?.mediaType === 'application/json';
    const query = req.query as Record<string, unknown>; // express parses the query string on each read of req.query
    rejectUnstorableText({ ...params, ...query }, json ? req.body : undefined);
    const valid = validator.validate(validator.operation(route.operationId), {
      params,
      headers: req.headers,
      query,
      body: json ? req.body : undefined, // raw bytes are the handler's to check, not the schema's
    });
    const handler = handlers[route.operationId] as Handler<OperationId>;
    const reply = await handler({
      operationId: route.operationId,
      params: canonicalIds(valid.params) as never,
      query: valid.query,
      body: req.body as never, // JSON validated above (defaults filled in place); raw bytes as sent
      caller,
      requestId: res.locals.requestId as string,
      req,
    });
    send(res, reply);
  };

  // closed but to the networks `[metrics] allow` names, judged by the socket's peer (a proxy in front
  // would otherwise let everyone through); others get the 404 of a path that does not exist
  const mayReadMetrics = proxyaddr.compile(config.metrics.allow);
  app.get('/metrics', async (req, res) => {
    const peer = req.socket.remoteAddress ?? '';
    if (!mayReadMetrics(peer, 0)) throw errors.routeNotFound(req.method, req.path);
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  app.use(docsRouter(openapiDocument));
  for (const extra of options.extraRouters ?? []) app.use(extra.path, extra.router);

  // a path of no operation (nor of the others above): 404, or 405 with the methods it has
  app.use((req: Request, res: Response) => {
    noStore(res);
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      metrics.observeRequest('unmatched', req.method, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
    });
    const match = res.locals.match as { allowed: string[] };
    if (match.allowed.length > 0) {
      res.setHeader('allow', match.allowed.join(', '));
      throw errors.methodNotAllowed(req.method, req.path);
    }
    throw errors.routeNotFound(req.method, req.path);
  });

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    // the client went away mid-body: nothing to answer, and no fault of ours (anyone could fill the
    // error log by sending half a body and closing)
    if (isClientAbort(err)) {
      req.log.debug({ requestId: res.locals.requestId as string }, 'client aborted the request');
      res.destroy();
      return;
    }
    const appError = httpError(toDomainError(err, options.unreachable));
    if (appError.status >= 500 && appError.status !== 501) {
      req.log.error({ err, requestId: res.locals.requestId as string }, 'request failed');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(appError.headers)) res.setHeader(name, value);
    sendJson(res.status(appError.status), JSON.stringify(appError.body));
  });

  return { app, warmUp: () => validator.warmUp() };
}

/**
 * HEAD is answered wherever GET is (RFC 9110 §9.3.2): routed, authenticated and handled as the GET,
 * and Node's HTTP server leaves the body out. `Allow` names HEAD beside every GET.
 */
function matchRoute(table: RouteTable<Route>, method: string, path: string) {
  const match = table.match(method === 'HEAD' ? 'GET' : method, path);
  if (match.route || !match.allowed.includes('GET')) return match;
  return { ...match, allowed: [...match.allowed, 'HEAD'] };
}

/**
 * A uuid in the path names the same row in any case (PostgreSQL reads both), so handlers see one
 * spelling: the ids they put into tickets, rate-limit keys and links must not depend on the caller's.
 */
function canonicalIds(params: Record<string, unknown>): Record<string, unknown> {
  for (const [name, value] of Object.entries(params)) {
    if (typeof value === 'string' && isUuid(value)) params[name] = value.toLowerCase();
  }
  return params;
}

type ReplyShape = {
  status: number;
  body?: unknown;
  stream?: Readable | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
};

function send(res: Response, reply: ReplyShape): void {
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  res.status(reply.status);
  if (reply.stream !== undefined) {
    res.type(reply.contentType ?? 'application/octet-stream');
    if (Buffer.isBuffer(reply.stream)) res.send(reply.stream);
    else if (res.req.method === 'HEAD') {
      reply.stream.destroy(); // the headers are the answer: the file is not read
      res.end();
    }
    // pipeline (not pipe) closes the source when the client goes away mid-download
    else pipeline(reply.stream, res).catch((err: unknown) => res.log.debug({ err }, 'download aborted'));
  } else if (reply.status === 204 || reply.body === undefined) {
    res.end();
  } else {
    sendJson(res, JSON.stringify(reply.body));
  }
}

/**
 * Answers a JSON text as express's `res.type('application/json').send(text)` does, byte for byte,
 * without its per-answer work (content-type parsing and formatting, mime lookup) where that comes to
 * the same: a 2xx or 4xx/5xx answer to a request that asks for no conditional answer.
 */
function sendJson(res: Response, text: string): void {
  const { req } = res;
  const conditional = req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined;
  const plain = res.statusCode !== 204 && res.statusCode !== 205 && res.statusCode !== 304;
  if (conditional || !plain || res.getHeader('transfer-encoding') !== undefined) {
    res.type('application/json').send(text);
    return;
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', String(Buffer.byteLength(text)));
  if (req.method === 'HEAD') res.end();
  else res.end(text, 'utf8');
}

/**
 * Answers carry passwords, pins, tickets, invite codes, streaming keys and TURN credentials, and are
 * the caller's own: no browser or shared cache may keep any of them (the contract declares it where
 * a secret is carried; every operation's answer, errors too, carries it).
 */
function noStore(res: Response): void {
  res.setHeader('cache-control', 'no-store');
}

/**
 * CORS as the `cors` package answers it: an actual request with any origin allowed gets its two
 * fixed headers here, without the package's per-request option merging; preflights and a list of
 * origins go through the package.
 */
function corsMiddleware(origins: string[]): (req: Request, res: Response, next: NextFunction) => void {
  const exposedHeaders = ['Link', 'x-request-id', 'Retry-After', 'WWW-Authenticate'];
  const anyOrigin = origins.includes('*');
  const full = cors({
    origin: anyOrigin ? '*' : origins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['authorization', 'content-type', 'x-request-id'],
    exposedHeaders,
    maxAge: 600,
  });
  const exposed = exposedHeaders.join(',');
  return (req, res, next) => {
    if (!anyOrigin || req.method === 'OPTIONS') {
      full(req, res, next);
      return;
    }
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', exposed);
    next();
  };
}

/** A request body must come as the media type the operation declares; a required one must come at all. */
function checkBody(req: Request, route: Route): void {
  if (!route.body) return;
  const sent = Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;
  if (sent && !req.is(route.body.mediaType)) throw errors.invalidContentType();
  if (route.body.required && (!sent || req.body === undefined)) {
    throw errors.validationFailed([{ field: 'body', code: 'value_required', message: 'A request body is required' }]);
  }
}

const UNPAIRED_SURROGATE = /\p{Surrogate}/u; // with the u flag a pair is one code point, and does not match

/**
 * Text PostgreSQL cannot hold is refused here rather than failing in the database (a 500): U+0000
 * anywhere, and an unpaired UTF-16 surrogate (JSON's `"\udfff"`, valid JSON but no Unicode; the
 * embedded database refused it, a server stores U+FFFD in its place). One walk over parameters and
 * body, without recursion, as a body may nest as deep as its size allows.
 */
function rejectUnstorableText(parameters: Record<string, unknown>, body: unknown): void {
  const offending: FieldError[] = [];
  const pending: [unknown, string][] = [
    [body, ''],
    [parameters, ''],
  ];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [value, path] = next;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) offending.push({ field: path, code: 'invalid_value', message: 'must not contain NUL characters' });
      else if (UNPAIRED_SURROGATE.test(value)) {
        offending.push({ field: path || 'body', code: 'invalid_value', message: 'must not contain unpaired surrogates' });
      }
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) pending.push([child, path ? `${path}.${key}` : key]);
    }
  }
  if (offending.length > 0) throw errors.validationFailed(offending);
}

/** body-parser's (raw-body's) error for a request body the client stopped sending before its end. */
function isClientAbort(err: unknown): boolean {
  return (err as { type?: string } | null)?.type === 'request.aborted';
}

function toDomainError(err: unknown, unreachable: HttpAppOptions['unreachable']): DomainError {
  if (err instanceof DomainError) return err;
  const type = (err as { type?: string } | null)?.type;
  if (type === 'entity.parse.failed') return errors.invalidJson();
  if (type === 'entity.too.large') return errors.payloadTooLarge(`${(err as { limit?: number }).limit ?? '?'} bytes`);
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return errors.invalidContentType();
  const down = unreachable(err);
  if (down === 'database') return errors.serviceUnavailable();
  // the start operations' tickets and the rate limits live in Redis when it is configured
  if (down === 'redis') return errors.serviceUnavailable('The shared state store (Redis) does not answer; try again shortly');
  return errors.internal(err);
}

/**
 * Every operation of the contract under its full path: its path item's server (else the document's,
 * `/v1`) before its path, so `/health` and `/v1/users/me` resolve alike. Tests resolve raw requests
 * to operations with the same table.
 */
/** The parts of the OpenAPI document that routing reads. */
interface OpenApiDocument {
  servers?: { url: string }[];
  security?: SecurityRequirement[];
  /** Optional only in the generated declaration (`Record<string, any>`); the contract has paths. */
  paths?: Record<string, OpenApiPathItem>;
}

type OpenApiPathItem = { servers?: { url: string }[] } & Partial<Record<string, OpenApiOperation>>;

interface OpenApiOperation {
  security?: SecurityRequirement[];
  requestBody?: { required?: boolean; content: Record<string, unknown> };
}

export function buildRoutes(doc: OpenApiDocument): { table: RouteTable<Route>; list: Route[] } {
  const table = new RouteTable<Route>();
  const list: Route[] = [];
  const rootServer = (doc.servers?.[0]?.url ?? '').replace(/\/$/, '');
  for (const [operationId, { method, path }] of Object.entries(operations) as [OperationId, { method: string; path: string }][]) {
    const item = doc.paths![path]!;
    const op = item[method]!;
    const server = (item.servers?.[0]?.url ?? rootServer).replace(/\/$/, '');
    const content = op.requestBody?.content;
    const route: Route = {
      operationId,
      method: method.toUpperCase(),
      template: path,
      security: op.security ?? doc.security ?? [],
      body: content ? { mediaType: Object.keys(content)[0]!, required: op.requestBody!.required === true } : undefined,
    };
    table.add(method, `${server}${path}`, route);
    list.push(route);
  }
  return { table, list };
}
