/**
 * Sends a request exactly as built, through node:http rather than fetch: fetch refuses a body on
 * GET, normalises paths (`..`, `%2e`) and checks header values, and a hostile client does none of
 * that. Each request has its own connection, so that a connection the server ends early (a body
 * over the limit) cannot spill into the next request, and a deadline, so that a hang fails the
 * test instead of stalling it.
 */
import { request as httpRequest } from 'node:http';
import type { RawRequest } from './http-requests.js';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  contentType: string | null;
  text: string;
}

class RequestHung extends Error {}

export function sendRaw(baseUrl: string, raw: RawRequest, timeoutMs = 15_000): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: raw.method,
        path: raw.target,
        agent: false,
        headers: { ...raw.headers, ...(raw.body ? { 'content-length': String(raw.body.length) } : {}) },
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          clearTimeout(deadline);
          const contentType = res.headers['content-type'];
          resolve({ status: res.statusCode ?? 0, headers: res.headers, contentType: contentType ?? null, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    const deadline = setTimeout(() => {
      req.destroy(new RequestHung(`${raw.method} ${raw.target.slice(0, 200)} had no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on('error', (err) => {
      // the server may answer (413) and close before the whole body is written: the answer counts
      if (!answered) {
        clearTimeout(deadline);
        reject(err);
      }
    });
    req.end(raw.body);
  });
}
