/**
 * Who may read `/metrics` (`[metrics] allow`): by default the loopback only; otherwise the networks
 * named, judged by the socket's peer, never by X-Forwarded-For. Anyone else gets the 404 of a path
 * that does not exist, with the error body.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';

import { loadConfig } from '../../../src/config/load.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();

/** GET /metrics from `localAddress` (any of 127.0.0.0/8 is this machine's loopback). */
function metricsFrom(baseUrl: string, localAddress: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}/metrics`, { localAddress, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('/metrics', () => {
  it('answers the loopback by default', async () => {
    expect(app.config.metrics.allow).toEqual(['loopback']);
    const answer = await metricsFrom(app.url, '127.0.0.1');
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('convene_http_requests_total');
  });

  it('answers only the networks named, by the socket peer, and 404 with the error body to others', async () => {
    const narrow = await app.withConfig({ metrics: { allow: ['127.0.0.2/32'] }, http: { trust_proxy: 1 } });
    try {
      expect((await metricsFrom(narrow.url, '127.0.0.2')).status).toBe(200);
      // one address past the edge of the network, and a forwarded claim of the allowed one
      for (const answer of [await metricsFrom(narrow.url, '127.0.0.3'), await metricsFrom(narrow.url, '127.0.0.1', { 'x-forwarded-for': '127.0.0.2' })]) {
        expect(answer.status).toBe(404);
        expect(JSON.parse(answer.body)).toMatchObject({ code: 'not_found', status: '404' });
        expect(answer.body).not.toContain('convene_http');
      }
    } finally {
      await narrow.close();
    }
  });

  it('is closed to everyone with an empty list', async () => {
    const closed = await app.withConfig({ metrics: { allow: [] } });
    try {
      expect((await metricsFrom(closed.url, '127.0.0.1')).status).toBe(404);
    } finally {
      await closed.close();
    }
  });

  it('refuses a configured entry that is no address or network, naming it', () => {
    expect(() => loadConfig({ file: false, env: {}, overrides: { metrics: { allow: ['10.0.0.0/33'] } } })).toThrow(/metrics\.allow: "10\.0\.0\.0\/33"/);
  });
});
