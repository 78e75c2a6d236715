/**
 * The per-request logger: what a finished request logs at which level (the access log at info, or at
 * debug when it is switched off), what `req.log` binds, and that nothing is made or written for a
 * request whose level is off.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';

import { requestLogger } from '../../../src/http/request-log.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** An app with the request logger over a logger writing JSON lines into `lines`; answers its URL. */
async function appLogging(level: string, lines: Record<string, unknown>[], accessLog = false): Promise<string> {
  const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const app = express();
  app.use((_req, res, next) => {
    res.locals.requestId = 'req-1';
    next();
  });
  app.use(requestLogger(logger, { accessLog }));
  const router = express.Router();
  router.get('/note', (req, res) => {
    req.log.info({ detail: 42 }, 'a note');
    res.status(204).end();
  });
  app.use('/mounted', router);
  app.get('/ok', (_req, res) => void res.json({}));
  app.get('/rooms/:room/invites/:code', (_req, res) => void res.json({}));
  app.get('/fails', (_req, res) => void res.status(503).json({}));
  server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server!.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('requestLogger', () => {
  it("masks the invite code of an owner's invite path, which is a guest's credential", async () => {
    const lines: Record<string, unknown>[] = [];
    const url = await appLogging('debug', lines);
    const code = '0c5b3a0e-2f6e-4d7f-9a51-3f1d2f9b6c11';
    await fetch(`${url}/rooms/r1/invites/${code}?x=1`);
    expect(JSON.stringify(lines)).not.toContain(code);
    expect(lines).toMatchObject([{ msg: 'request completed', req: { url: '/rooms/r1/invites/<invite code>?x=1' } }]);
  });

  it("masks the token of a calendar feed URL, which is the feed's only credential", async () => {
    const lines: Record<string, unknown>[] = [];
    const url = await appLogging('debug', lines);
    const token = 'Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5';
    await fetch(`${url}/v1/calendar_feeds/${token}/meetings.ics`);
    expect(JSON.stringify(lines)).not.toContain(token);
    expect(lines).toMatchObject([{ msg: 'request completed', req: { url: '/v1/calendar_feeds/<feed token>/meetings.ics' } }]);
  });

  it('logs a finished request at debug with its status, and a 5xx at error', async () => {
    const lines: Record<string, unknown>[] = [];
    const url = await appLogging('debug', lines);
    await fetch(`${url}/ok?x=1`);
    await fetch(`${url}/fails`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines).toMatchObject([
      { level: 20, msg: 'request completed', req: { id: 'req-1', method: 'GET', url: '/ok?x=1' }, res: { statusCode: 200 } },
      { level: 50, msg: 'request errored', req: { id: 'req-1', method: 'GET', url: '/fails' }, res: { statusCode: 503 } },
    ]);
    expect(typeof lines[0]!.responseTime).toBe('number');
  });

  it('binds the request to what a handler logs, with the URL as sent even under a mounted router', async () => {
    const lines: Record<string, unknown>[] = [];
    const url = await appLogging('info', lines);
    await fetch(`${url}/mounted/note`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines).toMatchObject([{ level: 30, msg: 'a note', detail: 42, req: { id: 'req-1', method: 'GET', url: '/mounted/note' } }]);
  });

  it('writes nothing for successful requests at warn', async () => {
    const lines: Record<string, unknown>[] = [];
    const url = await appLogging('warn', lines);
    await fetch(`${url}/ok`);
    await fetch(`${url}/fails`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines.map((line) => line.msg)).toEqual(['request errored']);
  });

  it('writes one access-log line per request at info when the access log is on, and none at info when off', async () => {
    const on: Record<string, unknown>[] = [];
    const withAccessLog = await appLogging('info', on, true);
    await fetch(`${withAccessLog}/ok?x=1`);
    await fetch(`${withAccessLog}/fails`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(on).toMatchObject([
      { level: 30, msg: 'request completed', req: { id: 'req-1', method: 'GET', url: '/ok?x=1' }, res: { statusCode: 200 } },
      { level: 50, msg: 'request errored', res: { statusCode: 503 } },
    ]);
    await new Promise<void>((resolve) => server!.close(() => resolve()));

    const off: Record<string, unknown>[] = [];
    const withoutAccessLog = await appLogging('info', off, false);
    await fetch(`${withoutAccessLog}/ok`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(off).toEqual([]);
  });
});
