/**
 * A real webhook receiver on loopback (port 0): it records every POST it gets (headers, body, when)
 * and answers what the test says (`answer`, per request; 200 by default, later (a promise of the
 * status), or never, to hang).
 * `verify` checks a delivery the way a receiver would, written here from the Standard Webhooks
 * text, independently of the service's own signing code.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  json: { id: string; type: string; timestamp: string; data: Record<string, unknown> };
  at: number;
}

/** A status to answer, a promise of one (answered when it settles), or 'hang' (no answer until the receiver closes). */
export type Answer = number | Promise<number> | 'hang';

export interface WebhookReceiver {
  url: string;
  received: Received[];
  answer: (request: Received, index: number) => Answer;
  /** Resolves once `count` requests arrived (fails after `withinMs`). */
  waitFor(count: number, withinMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const hanging = new Set<ServerResponse>();
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    answer: () => 200,
    async waitFor(count, withinMs = 10_000) {
      const until = Date.now() + withinMs;
      while (receiver.received.length < count) {
        if (Date.now() > until) throw new Error(`the receiver got ${receiver.received.length} requests, not ${count}, within ${withinMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return receiver.received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const request: Received = { headers: req.headers, body, json: JSON.parse(body), at: Date.now() };
      const index = receiver.received.push(request) - 1;
      const answer = receiver.answer(request, index);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      if (typeof answer !== 'number') {
        hanging.add(res);
        void answer.then((status) => hanging.delete(res) && res.writeHead(status, { 'content-type': 'text/plain' }).end('ok'));
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/**
 * A receiver's check of a delivery (Standard Webhooks): the signature (any `v1,` entry of the
 * space-separated list) over `id.timestamp.body` with the secret's base64 bytes, and the timestamp
 * within `toleranceSeconds` of now (older ones are replays).
 */
export function verify(secret: string, headers: IncomingHttpHeaders, body: string, toleranceSeconds = 300): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
