/**
 * Checks a server frame against the contract with the validators generated from spec/asyncapi.yaml:
 * the envelope, then the event's own schema. The signaling client loads this module only when asked
 * to validate (`connectSignaling({ validate: true })`), so that a client that does not validate
 * never loads the validators; the tests import it directly.
 */
import { eventValidators, validateServerEnvelope } from '../generated/signaling/validators.js';
import type { ServerEvent } from '../generated/signaling/types.js';
import { SignalingProtocolError } from './signaling-errors.js';

/** Throws a `SignalingProtocolError` naming the problems when `frame` is not a server event of the contract. */
export function checkServerFrame(frame: unknown): asserts frame is ServerEvent {
  if (!validateServerEnvelope(frame)) {
    throw new SignalingProtocolError(`server frame breaks the envelope: ${JSON.stringify(validateServerEnvelope.errors)}\n${JSON.stringify(frame)}`, frame);
  }
  const { namespace, payload } = frame as { namespace: string; payload: { message?: unknown } };
  const byMessage = eventValidators[namespace];
  // echo replies carry the command's `action`, no `message`: their validator is under "*"
  const validate = byMessage?.[typeof payload.message === 'string' ? payload.message : '*'] ?? byMessage?.['*'];
  if (!validate) throw new SignalingProtocolError(`server sent an event the contract does not have: ${JSON.stringify(frame)}`, frame);
  if (!validate(frame)) throw new SignalingProtocolError(`server frame breaks its schema: ${JSON.stringify(validate.errors)}\n${JSON.stringify(frame)}`, frame);
}
