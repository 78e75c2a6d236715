/**
 * A typed HTTP client for Convene, built on openapi-fetch and the types generated from
 * spec/openapi.yaml: paths, parameters, bodies and answers are checked by the compiler.
 *
 *   const api = createHttpClient({ baseUrl: 'http://localhost:11311/v1', token });
 *   const { data, error } = await api.GET('/users/me');
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from '../generated/openapi.js';

export type { paths };
export type ConveneHttpClient = Client<paths>;

export interface HttpClientOptions {
  /** The API root, e.g. `http://localhost:11311/v1`. */
  baseUrl: string;
  /** A Bearer access token, or a function that returns the current one. */
  token?: string | (() => string | undefined);
  fetch?: typeof fetch;
}

export function createHttpClient(options: HttpClientOptions): ConveneHttpClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl, fetch: options.fetch });
  if (options.token !== undefined) {
    const token = options.token;
    const auth: Middleware = {
      onRequest({ request }) {
        const value = typeof token === 'function' ? token() : token;
        if (value && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${value}`);
        return request;
      },
    };
    client.use(auth);
  }
  return client;
}
