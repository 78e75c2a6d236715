/**
 * Requests from a chosen loopback address (the whole of 127.0.0.0/8 is loopback on Linux, so a
 * client socket can bind any of it), with a chosen `X-Forwarded-For`, for the tests of how Convene
 * finds a client's address (`[http] trust_proxy`): wrong invite codes at `POST /v1/invite/verify`,
 * counted per source (10 in a window by default), whose answers are checked against the contract.
 */
import { randomInt } from 'node:crypto';
import { request } from 'node:http';

import { checkResponse } from './contract.js';
import type { Answer } from './signaling.js';

/**
 * A loopback address of its own for a test (never 127.0.0.1, where the suite's other requests
 * come from): failure counts in Redis outlive a run, so each run needs addresses of its own.
 */
export const freshLoopback = () => `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;

/**
 * A documentation address (2001:db8::/32) as a client's claimed or forwarded address: drawn from 2^48
 * so that two never meet (TEST-NET-3's 254 made a fresh claim equal the test's client now and then,
 * and inherit its count).
 */
export const freshClaim = () => `2001:db8:${[0, 0, 0].map(() => randomInt(0x10000).toString(16)).join(':')}::1`;

/** `POST /v1/invite/verify` with a random (unknown) code, from `localAddress` to `baseUrl`. */
export function wrongCodeFrom(baseUrl: string, localAddress: string, forwardedFor?: string): Promise<Answer<any>> {
  const body = JSON.stringify({ invite_code: crypto.randomUUID() });
  const headers: Record<string, string> = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
  if (forwardedFor !== undefined) headers['x-forwarded-for'] = forwardedFor;
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}/v1/invite/verify`, { method: 'POST', localAddress, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        checkResponse('verify_invite_code', { status, contentType: res.headers['content-type'] ?? null, body: text });
        const answerHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') answerHeaders.set(name, value);
        resolve({ status, body: text ? JSON.parse(text) : undefined, headers: answerHeaders });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The statuses of `count` wrong codes sent one after another. */
export async function statusesOf(count: number, send: (i: number) => Promise<Answer>): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await send(i)).status);
  return statuses;
}

/** `failures` 404s, then 429s up to `count`. */
export const limitedAfter = (failures: number, count: number) => [...Array<number>(failures).fill(404), ...Array<number>(count - failures).fill(429)];
