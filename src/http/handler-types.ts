/**
 * Types that tie handlers to the contract: a handler for operation K receives K's typed path
 * parameters, query and body, and must answer one of K's success statuses with K's body. The
 * handler map type (`Handlers<OperationId>`) makes a missing handler a compile error.
 */
import type { Request } from 'express';
import type { Readable } from 'node:stream';
import type { operations as Operations } from '../../generated/openapi.js';
import type { OperationId } from '../../generated/operations.js';
import type { Caller } from './auth.js';

type Op<K extends OperationId> = Operations[K];

type Part<K extends OperationId, Where extends string> = Op<K>['parameters'] extends infer P
  ? P extends { [W in Where]?: infer X }
    ? [X] extends [undefined]
      ? Record<string, never>
      : NonNullable<X>
    : Record<string, never>
  : never;

export type PathParams<K extends OperationId> = Part<K, 'path'>;
export type QueryParams<K extends OperationId> = Part<K, 'query'>;

type JsonOf<C> = C extends { 'application/json': infer B } ? B : never;

export type RequestBody<K extends OperationId> =
  Op<K> extends { requestBody: { content: infer C } }
    ? JsonOf<C> extends never
      ? Buffer
      : JsonOf<C>
    : Op<K> extends { requestBody?: { content: infer C } }
      ? (JsonOf<C> extends never ? Buffer : JsonOf<C>) | undefined
      : undefined;

type Responses<K extends OperationId> = Op<K>['responses'];
/** Errors are thrown as DomainErrors (src/errors.ts); a handler may still answer any declared status (a health probe answers 503 with its own body). */
type SuccessStatus<K extends OperationId> = Extract<keyof Responses<K>, number>;

type ReplyFor<R, S> = R extends { content: infer C }
  ? C extends { 'application/json': infer B }
    ? { status: S; body: B; headers?: Record<string, string> }
    : { status: S; stream: Readable | Buffer; contentType: string; headers?: Record<string, string> }
  : { status: S; body?: undefined; headers?: Record<string, string> };

/** What a handler answers: one of its operation's success statuses with that status's body. */
export type Reply<K extends OperationId> = {
  [S in SuccessStatus<K>]: ReplyFor<Responses<K>[S], S>;
}[SuccessStatus<K>];

export interface Context<K extends OperationId> {
  operationId: K;
  params: PathParams<K>;
  query: QueryParams<K>;
  body: RequestBody<K>;
  caller: Caller;
  requestId: string;
  /** The raw request, for what the contract does not model (source address for rate limits, base URL for links). */
  req: Request;
}

export type Handler<K extends OperationId> = (ctx: Context<K>) => Promise<Reply<K>>;
export type Handlers<K extends OperationId> = { [P in K]: Handler<P> };
