/**
 * Convene's typed clients (`convene/client`): HTTP on openapi-fetch, and the `/signaling` socket;
 * both are typed by the code generated from spec/.
 */
export { createHttpClient, type ConveneHttpClient, type HttpClientOptions, type paths } from './http.js';
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
