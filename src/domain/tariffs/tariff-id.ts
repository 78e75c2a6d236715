import { createHash } from 'node:crypto';

/**
 * Tariffs live in configuration, not in the database, yet clients keep their ids. A name-based
 * UUID (RFC 9562 version 5: SHA-1 over namespace + name) gives every tariff the same id on every
 * instance and after every restart.
 */
const TARIFF_NAMESPACE = 'c79cef7c-f9cf-45bb-bd1e-f25151b7bfc3';

export function uuidV5(name: string, namespace: string): string {
  const namespaceBytes = Buffer.from(namespace.replaceAll('-', ''), 'hex');
  if (namespaceBytes.length !== 16) throw new Error(`not a UUID: ${namespace}`);
  const hash = createHash('sha1').update(namespaceBytes).update(name, 'utf8').digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50; // version 5
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const tariffIdFor = (name: string): string => uuidV5(name, TARIFF_NAMESPACE);
