import { createHash } from 'node:crypto';

/** A Libravatar (Gravatar-compatible) URL: the base URL plus the MD5 of the trimmed, lower-cased address. */
export function libravatarUrl(baseUrl: string, email: string): string {
  const hash = createHash('md5').update(email.trim().toLowerCase()).digest('hex');
  return `${baseUrl}${hash}`;
}
