/**
 * Domain code throws transport-free `DomainError`s (src/errors.ts); a test that asserts what HTTP
 * answers for one (its status, headers) reads it through the HTTP edge's own table.
 */
import { DomainError } from '../../src/errors.js';
import { httpError } from '../../src/http/errors.js';

/** The promise, its DomainError rejection seen as HTTP answers it; any other outcome as it is. */
export function asHttp<T>(promise: Promise<T>): Promise<T> {
  return promise.catch((err: unknown) => {
    throw err instanceof DomainError ? httpError(err) : err;
  });
}
