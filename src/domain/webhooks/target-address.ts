/**
 * Where a webhook may be sent (SSRF): `https` only unless `allow_http`, and never to a loopback,
 * link-local (cloud metadata at 169.254.169.254), private, shared (CGNAT), multicast or reserved
 * address unless `allow_private`. Checked when a subscription is created (the URL's host, resolved)
 * and again on every delivery on the address actually connected to (`guardedLookup`), so that a
 * name re-pointed at an internal address after subscribing (DNS rebinding) is not reached.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export interface TargetRules {
  allow_http: boolean;
  allow_private: boolean;
}

const internal = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  internal.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64: reaches IPv4 addresses, internal ones included
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  internal.addSubnet(network, prefix, 'ipv6');

/** True for an address a webhook may not reach without `allow_private`. */
export function isInternalAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return internal.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true; // not an address at all: never connect
  return internal.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The URL's host as an address or name (IPv6 literals without their brackets). */
function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

const lookupAll = (host: string) =>
  new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(host, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/**
 * Why this URL may not be subscribed to, or undefined when it may. Resolves the host (no connection
 * is made): every address it resolves to must be public.
 */
export async function refusalOf(raw: string, rules: TargetRules): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not an absolute URL';
  }
  if (url.protocol !== 'https:' && !(rules.allow_http && url.protocol === 'http:')) {
    return rules.allow_http ? 'only http and https URLs are accepted' : 'only https URLs are accepted';
  }
  if (url.username || url.password) return 'credentials in the URL are not accepted';
  if (rules.allow_private) return undefined;
  const host = hostOf(url);
  if (isIP(host)) return isInternalAddress(host) ? 'the address is loopback, link-local or private' : undefined;
  if (host === 'localhost' || host.endsWith('.localhost')) return 'the host is loopback';
  let addresses: LookupAddress[];
  try {
    addresses = await lookupAll(host);
  } catch {
    return 'the host name does not resolve';
  }
  return addresses.some((a) => isInternalAddress(a.address)) ? 'the host resolves to a loopback, link-local or private address' : undefined;
}

/** The error of a delivery refused before connecting. */
export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
}

/** Checks an IP literal host before connecting (Node does not call `lookup` for those). */
export function refuseLiteral(url: URL, rules: TargetRules): void {
  const host = hostOf(url);
  if (!rules.allow_private && isIP(host) && isInternalAddress(host)) throw new RefusedAddressError(`refused internal address ${host}`);
}

/** A `lookup` for http.request that fails on any internal address the name resolves to (unless allowed). */
export function guardedLookup(rules: TargetRules): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const list = addresses;
      const refused = rules.allow_private ? undefined : list.find((a) => isInternalAddress(a.address));
      if (refused) return callback(new RefusedAddressError(`${hostname} resolves to the internal address ${refused.address}`), '', 4);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const first = list[0];
      if (!first) return callback(new RefusedAddressError(`${hostname} has no address`), '', 4);
      callback(null, first.address, first.family);
    });
  };
}
