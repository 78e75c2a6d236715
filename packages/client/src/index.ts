/**
 * Convene's typed clients (`@convene/client`): HTTP on openapi-fetch, and the `/signaling` socket;
 * both are typed by the code generated from spec/, and the contract's types are exported with them.
 */
import type { components } from '../generated/openapi.js';

export { createHttpClient, type ConveneHttpClient, type HttpClientOptions } from './http.js';
export {
  connectSignaling,
  DEFAULT_SIGNALING_PROTOCOL,
  signalingUrl,
  startSignaling,
  type ConnectOptions,
  type StartedSignaling,
  type StartOptions,
} from './signaling.js';
export { PROTOCOL_FAILURE_CLOSE, SignalingConnection } from './signaling-connection.js';
export {
  SignalingClosedError,
  SignalingCommandError,
  SignalingConnectError,
  SignalingProtocolError,
  SignalingStartError,
  SignalingTimeoutError,
} from './signaling-errors.js';
export type * from './signaling-types.js';

/** The HTTP contract (spec/openapi.yaml): its paths, operations, schemas and webhooks. */
export type { components, operations, paths, webhooks } from '../generated/openapi.js';
export { verifyWebhook, WebhookVerificationError, type VerifyWebhookOptions, type WebhookBody, type WebhookHeaders, type WebhookType } from './webhooks.js';
/** A schema of the HTTP contract by name: `Schema<'Room'>` is `components['schemas']['Room']`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];
/**
 * The signaling contract (spec/asyncapi.yaml): every message by name (`TimerStartCommand`,
 * `ControlJoinSuccessEvent`, …), the unions `ClientCommand` and `ServerEvent`, and its schemas
 * (`Participant`, `ErrorBody`, …). Its `components` is `SignalingComponents` here, beside the HTTP one.
 */
export type * from '../generated/signaling/types.js';
export type { components as SignalingComponents } from '../generated/signaling/types.js';
