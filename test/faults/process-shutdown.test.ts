/**
 * SIGTERM drains (issue 8, faults): Convene runs as a real process (src/main.ts) with slow uploads in
 * flight and participants in a room, one of them on a slow network that reads the close frame only a
 * second late. On SIGTERM the uploads, still being streamed by their clients, finish with 201 and
 * are stored (they are there after a restart); every new connection from the moment the process
 * says it is shutting down is refused (or answered 503) — while the slow socket holds the signaling
 * shutdown too; every socket gets close code 1001; the process exits 0 within a bound. On PostgreSQL
 * with Redis, participants on another instance are told that those of the stopped one left, and a
 * latecomer finds only those still there.
 *
 * Runs on the embedded default (PGlite in a data directory, in-process signaling) and, when
 * DATABASE_URL is set, on a fresh database of that server (with REDIS_URL, on that Redis).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binary } from '../support/assets.js';
import { call, childEnv, freshServerDatabase, joinOn, killChildren, loginTo, probe, startChild, type ChildServer } from '../support/child-server.js';
import { checkResponse } from '../support/contract.js';
import { startTestIssuer, type TestIssuer } from '../support/oidc-issuer.js';

const databaseUrl = process.env.DATABASE_URL || undefined;
const redisUrl = process.env.REDIS_URL || undefined;
/** From SIGTERM to exit, with uploads that take a second more and a socket that answers a second late. */
const EXIT_WITHIN_MS = 10_000;

let issuer: TestIssuer;
const dirs: string[] = [];
const drops: Array<() => Promise<void>> = [];
beforeAll(async () => {
  issuer = await startTestIssuer({ clientId: 'convene' });
});
afterAll(async () => {
  await killChildren();
  await Promise.all(drops.map((drop) => drop()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await issuer?.close();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'convene-shutdown-'));
  dirs.push(dir);
  return dir;
}

/** The child's environment for a mode: the embedded database in `cwd`, or a fresh one on the server (and Redis). */
async function modeEnv(cwd: string, onServer: boolean): Promise<Record<string, string>> {
  if (!onServer) return childEnv(cwd, issuer);
  const database = await freshServerDatabase(databaseUrl!);
  drops.push(database.drop);
  return childEnv(cwd, issuer, { DATABASE_URL: database.url, ...(redisUrl ? { REDIS_URL: redisUrl } : {}) });
}

/**
 * An upload whose client sends the body slowly (a client on a slow uplink): the head now, with
 * `Expect: 100-continue`, the first piece once the server answers 100 (`accepted`: Node writes it as
 * it hands the request to the service, so from then on the request is in flight there), the other
 * pieces by `finish`, `intervalMs` apart.
 */
function slowUpload(child: ChildServer, token: string, roomId: string, bytes: Buffer, filename: string, pieces: number) {
  const req = httpRequest({
    host: '127.0.0.1',
    port: child.port,
    method: 'POST',
    path: `/v1/rooms/${roomId}/assets?filename=${filename}`,
    agent: false,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/octet-stream',
      'content-length': bytes.length,
      expect: '100-continue',
    },
  });
  const answer = new Promise<{ status: number; contentType: string | null; text: string; at: number }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, contentType: res.headers['content-type'] ?? null, text, at: Date.now() }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  const size = Math.ceil(bytes.length / pieces);
  const parts = Array.from({ length: pieces }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
  const accepted = Promise.race([
    new Promise<void>((resolve) =>
      req.once('continue', () => {
        req.write(parts[0]);
        resolve();
      }),
    ),
    answer.then((early) => {
      throw new Error(`the upload was answered ${early.status} before 100 Continue: ${early.text}`);
    }),
  ]);
  req.flushHeaders();
  return {
    accepted,
    answer,
    async finish(intervalMs: number) {
      for (const part of parts.slice(1)) {
        await sleep(intervalMs);
        req.write(part);
      }
      req.end();
      return Date.now();
    },
  };
}

const modes = [
  { name: 'embedded (PGlite in a data directory, in-process signaling)', onServer: false },
  ...(databaseUrl ? [{ name: `PostgreSQL${redisUrl ? ' and Redis' : ''}`, onServer: true }] : []),
];

describe.each(modes)('SIGTERM on $name', ({ onServer }) => {
  it('finishes in-flight uploads, refuses new connections, closes every socket with 1001 and exits 0', { timeout: 120_000 }, async () => {
    const cwd = tempDir();
    const env = await modeEnv(cwd, onServer);
    const child = await startChild(cwd, env);
    const token = await loginTo(child, issuer, 'olga');
    const created = await call(child, 'POST', '/v1/rooms', { token, body: { enable_sip: false } });
    expect(created.status).toBe(201);
    const roomId = created.body.id as string;

    const sockets: Awaited<ReturnType<typeof joinOn>>[] = [];
    for (const name of ['One', 'Two', 'Three']) sockets.push(await joinOn(child, token, roomId, name));
    const slowReader = sockets[2]!;

    const files = [0, 1, 2].map((i) => ({ name: `slides-${i}.bin`, bytes: binary(256 * 1024 + i) }));
    const uploads = files.map((file) => slowUpload(child, token, roomId, file.bytes, file.name, 10));
    await Promise.all(uploads.map((upload) => upload.accepted)); // in flight at the server

    slowReader.ws.pause(); // reads nothing (not the close frame either) until resumed
    const signalled = Date.now();
    child.kill('SIGTERM');
    await child.logged('shutting down');

    let exited = false;
    void child.exited.then(() => (exited = true));
    const probes: (Awaited<ReturnType<typeof probe>> & { path: string })[] = [];
    const probing = (async () => {
      // liveness and readiness by turns, as an orchestrator and a load balancer would ask
      for (let turn = 0; !exited; turn++) {
        const path = turn % 2 === 0 ? '/health' : '/ready';
        probes.push({ path, ...(await probe(child, path)) });
        await sleep(20);
      }
    })();
    const resumed = sleep(1_000).then(() => slowReader.ws.resume());

    const sentAll = await Promise.all(uploads.map((upload) => upload.finish(100)));
    const answers = await Promise.all(uploads.map((upload) => upload.answer));
    const probesWhileUploading = probes.length;
    const exit = await child.exited;
    const exitedAfter = Date.now() - signalled;
    await probing;
    await resumed;

    // the uploads were still being sent well after SIGTERM, and were answered as ever
    expect(Math.min(...sentAll) - signalled).toBeGreaterThan(700);
    answers.forEach((answer, i) => {
      expect(answer.status, answer.text).toBe(201);
      checkResponse('create_room_asset', { status: answer.status, contentType: answer.contentType, body: answer.text });
      expect(JSON.parse(answer.text)).toMatchObject({ filename: files[i]!.name, size: files[i]!.bytes.length, kind: 'upload' });
    });

    // no new connection got in once shutdown began: refused, or at most told 503
    const seen = (status: number | string) => probes.filter((p) => p.status === status).length;
    console.log(`new connections after SIGTERM: ${probes.length} (${seen(503)} answered 503, ${seen('refused')} refused); exit after ${exitedAfter} ms`);
    expect(probesWhileUploading).toBeGreaterThanOrEqual(5);
    for (const result of probes) {
      expect(['refused', 503], JSON.stringify(result)).toContain(result.status);
      // while the instance goes away /health answers its Health body, saying so, and /ready the error body
      if (result.status !== 503) continue;
      if (result.path === '/health') expect(JSON.parse(result.body!)).toStrictEqual({ status: 'unavailable', database: 'up' });
      else expect(JSON.parse(result.body!)).toMatchObject({ code: 'service_unavailable', message: 'The server is shutting down', status: '503' });
    }

    for (const socket of sockets) expect((await socket.closed).code).toBe(1001);
    expect(exit, child.output()).toEqual({ code: 0, signal: null });
    expect(exitedAfter).toBeLessThan(EXIT_WITHIN_MS);

    // what was answered 201 is stored: the files are there after a restart on the same data
    const again = await startChild(cwd, env);
    try {
      for (const [i, answer] of answers.entries()) {
        const assetId = JSON.parse(answer.text).id as string;
        const response = await fetch(`${again.url}/v1/rooms/${roomId}/assets/${assetId}`, { headers: { authorization: `Bearer ${token}` } });
        expect(response.status).toBe(200);
        expect(Buffer.from(await response.arrayBuffer()).equals(files[i]!.bytes)).toBe(true);
      }
    } finally {
      again.kill('SIGTERM');
      expect(await again.exited, again.output()).toEqual({ code: 0, signal: null });
    }
  });
});

describe.skipIf(!(databaseUrl && redisUrl))('SIGTERM on one of two instances over PostgreSQL and Redis', () => {
  it('tells the participants on the other instance that those of the stopped one left', { timeout: 120_000 }, async () => {
    const [cwdOne, cwdTwo] = [tempDir(), tempDir()];
    const env = await modeEnv(cwdOne, true);
    const one = await startChild(cwdOne, env);
    // the same database and Redis; a working directory of its own
    const two = await startChild(cwdTwo, { ...env, HOME: cwdTwo, CONVENE_DATABASE__DATA_DIR: join(cwdTwo, 'data') });
    const token = await loginTo(one, issuer, 'olga');
    const created = await call(one, 'POST', '/v1/rooms', { token, body: { enable_sip: false } });
    const roomId = created.body.id as string;

    const leaving = [await joinOn(one, token, roomId, 'Ann'), await joinOn(one, token, roomId, 'Ben')];
    const staying = await joinOn(two, token, roomId, 'Cleo');
    expect(staying.joinSuccess.participants.map((p: { id: string }) => p.id).sort()).toEqual(leaving.map((p) => p.participantId).sort());

    one.kill('SIGTERM');
    for (const socket of leaving) expect((await socket.closed).code).toBe(1001);
    const left = [await staying.next('control', 'left', 5_000), await staying.next('control', 'left', 5_000)];
    expect(left.map((frame) => frame.payload.id).sort()).toEqual(leaving.map((p) => p.participantId).sort());
    for (const frame of left) expect(frame.payload.reason).toBe('quit');
    expect(await one.exited, one.output()).toEqual({ code: 0, signal: null });

    // no ghost of the stopped instance is left in the room
    const latecomer = await joinOn(two, token, roomId, 'Dan');
    expect(latecomer.joinSuccess.participants.map((p: { id: string }) => p.id)).toEqual([staying.participantId]);
    await staying.close();
    await latecomer.close();
    two.kill('SIGTERM');
    expect(await two.exited, two.output()).toEqual({ code: 0, signal: null });
  });
});
