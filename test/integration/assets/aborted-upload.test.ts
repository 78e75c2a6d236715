/**
 * A client that goes away in the middle of an upload is no server error: anyone could send half a
 * body and close, as often as they like, and each one was logged at error level with a stack
 * (issue 22). The service runs with its own logger at `trace`; the upload comes over a raw socket
 * that sends the headers and half the declared body, then closes.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLoggedApp, type LoggedApp } from '../../support/logged-app.js';
import { insertRoom } from '../../support/room-content.js';
import type { TestUser } from '../../support/test-app.js';

const app = {} as LoggedApp;
let owner: TestUser;
beforeAll(async () => {
  Object.assign(app, await startLoggedApp());
  owner = await app.login('owner');
});
afterAll(() => app.close?.());

/** Sends `method path` announcing `length` bytes, writes half of them and closes the socket. */
async function abandonUpload(method: string, path: string, headers: Record<string, string>, length: number): Promise<void> {
  const { port } = new URL(app.url);
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const head = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, `Content-Length: ${length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  socket.write(`${head.join('\r\n')}\r\n\r\n`);
  await new Promise<void>((resolve) => socket.write(Buffer.alloc(length / 2, 7), () => resolve()));
  await new Promise<void>((resolve) => socket.end(resolve));
  socket.destroy();
}

/** The log's entries, once `settled` holds for one of them (polled: the server notices the close on its own time). */
async function entriesOnce(settled: (entry: Record<string, unknown>) => boolean): Promise<Record<string, unknown>[]> {
  for (;;) {
    const entries = app
      .log()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    if (entries.some(settled)) return entries;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it.each([
  ['an upload', 'POST', (roomId: string) => `/v1/rooms/${roomId}/assets?filename=half.bin`, 'application/octet-stream'],
  ['a JSON body', 'PATCH', (roomId: string) => `/v1/rooms/${roomId}`, 'application/json'],
])('logs %s the client abandons halfway as a client abort, not as an error', async (_what, method, pathOf, contentType) => {
  const roomId = await insertRoom(app, owner);
  const path = pathOf(roomId);
  await abandonUpload(method, path, { authorization: `Bearer ${owner.accessToken}`, 'content-type': contentType }, 64 * 1024);
  const aboutIt = (entry: Record<string, unknown>) => (entry.req as { url?: string } | undefined)?.url === path;
  const entries = await entriesOnce((entry) => aboutIt(entry) && (entry.level as number) >= 20 && entry.msg !== 'request completed');
  const logged = entries.filter(aboutIt);
  expect(
    logged.filter((entry) => (entry.level as number) >= 40),
    JSON.stringify(logged),
  ).toEqual([]);
  expect(logged.map((entry) => entry.msg)).toContain('client aborted the request');
});
