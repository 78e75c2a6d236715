/** Why a Janus request failed: Janus said no, Janus did not answer, or the connection is gone. */

/**
 * Janus refused a request: a core `error` reply (`error.code`, `error.reason`) or a plugin's
 * (`plugindata.data.error_code`, `error`). Codes worth naming are below.
 */
export class JanusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
  ) {
    super(`janus error ${code}: ${reason}`);
    this.name = 'JanusError';
  }
}

/** Codes of the Janus core (janus/apierror.h) and of the videoroom plugin (janus_videoroom.c). */
export const JanusErrorCode = {
  noSuchSession: 458,
  noSuchHandle: 459,
  videoroomAlreadyJoined: 425,
  videoroomNoSuchRoom: 426,
  videoroomRoomExists: 427,
  videoroomNoSuchFeed: 428,
  videoroomPublishersFull: 432,
  videoroomIdExists: 436,
} as const;

/** Janus did not answer a request within the connection's `requestTimeoutMs`. */
export class JanusTimeoutError extends Error {
  constructor(
    readonly request: string,
    readonly timeoutMs: number,
  ) {
    super(`janus ${request}: no answer within ${timeoutMs} ms`);
    this.name = 'JanusTimeoutError';
  }
}

/** The connection (or its session) went down or was closed before the request was answered, or was not up. */
export class JanusConnectionLostError extends Error {
  constructor(readonly why: string) {
    super(`janus connection lost: ${why}`);
    this.name = 'JanusConnectionLostError';
  }
}
