/**
 * Errors at the HTTP edge: a `DomainError` (src/errors.ts) rendered as its status, headers
 * (error-status.ts) and the error body of docs/architecture.md §4.
 */
import { documentationUrl, type DomainError, type ErrorCode, type FieldError } from '../errors.js';
import { HTTP_STATUS, httpHeaders } from './error-status.js';

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  documentation_url: string;
  status: string;
  errors?: FieldError[];
}

/** An error as HTTP answers it. */
export interface HttpError {
  status: number;
  code: ErrorCode;
  message: string;
  errors?: FieldError[];
  headers: Record<string, string>;
  body: ErrorBody;
}

export function httpError(error: DomainError): HttpError {
  const status = HTTP_STATUS[error.code];
  return { status, code: error.code, message: error.message, errors: error.errors, headers: httpHeaders(error), body: errorBody(error) };
}

export function errorBody(error: DomainError): ErrorBody {
  const body: ErrorBody = {
    code: error.code,
    message: error.message,
    documentation_url: documentationUrl(error.code),
    status: String(HTTP_STATUS[error.code]),
  };
  if (error.errors) body.errors = error.errors;
  return body;
}
