/**
 * Fixtures of the asset tests (test/integration/assets): uploads and downloads of raw bytes, with
 * every answer checked against the contract (downloads are binary, so they bypass `app.request`).
 */
import { expect } from 'vitest';
import type { components } from '../../generated/openapi.js';
import { checkResponse } from './contract.js';
import { headersOf } from './room-content.js';
import type { TestApp, TestUser } from './test-app.js';

export type Asset = components['schemas']['Asset'];

export const assetsPath = (roomId: string) => `/v1/rooms/${roomId}/assets`;

export interface UploadOptions {
  filename?: string;
  /** The raw query string instead of `filename=…` (to test what the query may hold). */
  query?: string;
  contentType?: string;
}

/** `POST /rooms/{room_id}/assets` with `bytes` as the body. */
export function upload(app: TestApp, user: TestUser | undefined, roomId: string, bytes: Buffer, options: UploadOptions = {}) {
  const query = options.query ?? `filename=${encodeURIComponent(options.filename ?? 'agenda.pdf')}`;
  return app.request('POST', `${assetsPath(roomId)}?${query}`, {
    headers: headersOf(user, options.contentType ?? 'application/octet-stream'),
    body: bytes,
  });
}

/** Uploads as the given user and answers the stored asset (asserting 201). */
export async function uploaded(app: TestApp, user: TestUser, roomId: string, bytes: Buffer, filename = 'agenda.pdf'): Promise<Asset> {
  const res = await upload(app, user, roomId, bytes, { filename });
  expect(res.status, res.text_).toBe(201);
  return JSON.parse(res.text_) as Asset;
}

export interface Download {
  status: number;
  headers: Headers;
  bytes: Buffer;
  /** The error body, when the answer is one. */
  error?: { code: string };
}

/** `GET /rooms/{room_id}/assets/{asset_id}`, the body kept as bytes. */
export async function download(app: TestApp, user: TestUser | undefined, roomId: string, assetId: string): Promise<Download> {
  const response = await fetch(`${app.url}${assetsPath(roomId)}/${assetId}`, { headers: headersOf(user) });
  const bytes = Buffer.from(await response.arrayBuffer());
  const contentType = response.headers.get('content-type');
  checkResponse('get_room_asset', { status: response.status, contentType, body: bytes.toString('utf8') });
  const error = contentType?.startsWith('application/json') ? (JSON.parse(bytes.toString('utf8')) as { code: string }) : undefined;
  return { status: response.status, headers: response.headers, bytes, error };
}

/** Bytes of every value 0..255, repeated up to `size`: binary content that text handling would corrupt. */
export function binary(size: number): Buffer {
  return Buffer.from(Array.from({ length: size }, (_, i) => (i * 7 + 3) % 256));
}
