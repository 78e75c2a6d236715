import { createHash } from 'node:crypto';

/** Cache key of a bearer token: its SHA-256, so the map holds no usable credentials and keys stay short. */
export const tokenCacheKey = (token: string): string => createHash('sha256').update(token).digest('base64url');
