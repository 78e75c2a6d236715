/**
 * Opaque, tamper-proof page cursors (docs/architecture.md §4): base64url(JSON payload) "." base64url(HMAC).
 * The payload names what it is a cursor of (`kind`), so that a cursor of one list cannot be replayed
 * on another; a cursor that is malformed, altered or of another kind is a 400, never a 500.
 *
 * The key must be the same on every instance behind a load balancer for cursors to survive a hop
 * between them: `[http] cursor_secret`, or else one generated once and kept in the database
 * (`src/db/service-secrets.repository.ts`).
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { errors } from '../../errors.js';
import { isUuid } from '../uuid.js';

export interface CursorCodec {
  encode(kind: string, payload: Record<string, unknown>): Promise<string>;
  /** The payload of a cursor of `kind`; 400 `validation_failed` (field `param`) for anything else. */
  decode(kind: string, cursor: string, param: string): Promise<Record<string, unknown>>;
}

/** The signing key, or how to get it (read on first use, so that start-up needs no database). */
export type CursorKey = Buffer | string | (() => Promise<string>);

const SIGNATURE_BYTES = 16; // 128 bits of HMAC-SHA256 are plenty against forgery and keep links short

/** The key as HMAC takes it; a text key is its UTF-8 bytes, as createHmac reads a string. */
const secretKey = (key: Buffer | string): KeyObject => createSecretKey(typeof key === 'string' ? Buffer.from(key, 'utf8') : key);

export function createCursorCodec(key: CursorKey): CursorCodec {
  let resolved: Promise<KeyObject> | undefined;
  // a KeyObject, made once: createHmac imports a raw key on every call, which took 5× the HMAC itself
  const keyOf = () =>
    (resolved ??= (typeof key === 'function' ? key() : Promise.resolve(key)).then(secretKey, (err: unknown) => {
      resolved = undefined; // a database that was down is asked again next time
      throw err;
    }));
  const sign = async (data: string) =>
    createHmac('sha256', await keyOf())
      .update(data)
      .digest()
      .subarray(0, SIGNATURE_BYTES);
  return {
    async encode(kind, payload) {
      const data = Buffer.from(JSON.stringify({ k: kind, ...payload })).toString('base64url');
      return `${data}.${(await sign(data)).toString('base64url')}`;
    },
    async decode(kind, cursor, param) {
      const invalid = () => errors.validationFailed([{ field: param, code: 'invalid_value', message: 'The cursor is malformed or was altered' }]);
      const [data, signature, ...rest] = cursor.split('.');
      if (!data || !signature || rest.length > 0) throw invalid();
      // compared as text: base64 decoding ignores a last character's spare bits, so two strings
      // can decode to the same signature, and an altered string must not pass
      const given = Buffer.from(signature);
      const expected = Buffer.from((await sign(data)).toString('base64url'));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
      let payload: unknown;
      try {
        payload = JSON.parse(Buffer.from(data, 'base64url').toString('utf8'));
      } catch {
        throw invalid();
      }
      if (typeof payload !== 'object' || payload === null || (payload as { k?: unknown }).k !== kind) throw invalid();
      return payload as Record<string, unknown>;
    },
  };
}

const malformed = (param: string) =>
  errors.validationFailed([{ field: param, code: 'invalid_value', message: 'The cursor is malformed or not one of this list' }]);
const MICROSECOND_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

const instantOf = (value: unknown): Date | undefined => {
  const date = typeof value === 'string' ? new Date(value) : undefined;
  return date && !Number.isNaN(date.getTime()) ? date : undefined;
};

/** `GET /events`: the last event of a page, by its keyset (starts_at, created_at to the µs, id). */
export interface ListPosition {
  startsAt: Date | null;
  createdAtKey: string;
  id: string;
}

export function encodeListPosition(codec: CursorCodec, p: ListPosition): Promise<string> {
  return codec.encode('events', { s: p.startsAt ? p.startsAt.toISOString() : null, c: p.createdAtKey, i: p.id });
}

export async function decodeListPosition(codec: CursorCodec, cursor: string): Promise<ListPosition> {
  const p = await codec.decode('events', cursor, 'after');
  const startsAt = p.s === null ? null : instantOf(p.s);
  const valid = startsAt !== undefined && typeof p.c === 'string' && MICROSECOND_INSTANT.test(p.c) && typeof p.i === 'string' && isUuid(p.i);
  if (!valid) throw malformed('after');
  return { startsAt, createdAtKey: p.c as string, id: p.i as string };
}

/**
 * Instances: where the last occurrence of a page is and its original start (its instance id), the
 * listing's keyset (instances are listed by where they are, ties by original start), bound to its
 * event. A cursor written before moved occurrences were listed where they are carries only `a`, the
 * original start of an occurrence that was listed there.
 */
export interface InstancePosition {
  at: Date;
  original: Date;
}

export function encodeInstancePosition(codec: CursorCodec, eventId: string, p: InstancePosition): Promise<string> {
  return codec.encode('instances', { e: eventId, a: p.at.toISOString(), o: p.original.toISOString() });
}

export async function decodeInstancePosition(codec: CursorCodec, cursor: string, param: string, eventId: string): Promise<InstancePosition> {
  const p = await codec.decode('instances', cursor, param);
  const at = p.e === eventId ? instantOf(p.a) : undefined;
  const original = p.o === undefined ? at : instantOf(p.o);
  if (!at || !original) throw malformed(param);
  return { at, original };
}
