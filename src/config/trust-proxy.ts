/**
 * `[http] trust_proxy`: which proxies in front of Convene may name the client's address in
 * `X-Forwarded-For` (Express's `trust proxy` setting, which walks the header from its right end,
 * the hop nearest to Convene, past the trusted proxies). `false`: none, the socket's peer is the
 * client. A hop count: that many proxies stand in front (nginx, then a load balancer: 2). A list:
 * the proxies' addresses or networks (`10.0.0.0/8`, `::1`, or Express's names `loopback`,
 * `linklocal`, `uniquelocal`).
 *
 * `true` is refused: Express then takes the left-most address, which the client writes itself
 * (`X-Forwarded-For: anything, <real>` is what nginx's `$proxy_add_x_forwarded_for` forwards), so
 * every request could claim a new address and the per-source brute-force limits would be gone.
 */
import { isIP } from 'node:net';
import proxyaddr from 'proxy-addr';

export type TrustProxy = false | number | string[];

/** The names Express (proxy-addr) gives to address ranges. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);
/** More hops than any deployment has; a count beyond the real chain would trust what the client wrote. */
export const MAX_PROXY_HOPS = 10;

export const TRUE_REFUSED =
  'must not be true: Express would take the left-most X-Forwarded-For address, which any client writes itself ' +
  '(every request a new address, no per-source limit); give the number of proxies in front of Convene (1 for one ' +
  'nginx) or their addresses or networks (["10.0.0.0/8"])';
export const TRUST_PROXY_SHAPE = `must be false, a number of proxies (0 to ${MAX_PROXY_HOPS}) or a list of proxy addresses or networks`;

/** What is wrong with a `trust_proxy` list entry, or undefined when Express will accept it. */
export function trustedProxyProblem(entry: string): string | undefined {
  if (NAMED_RANGES.has(entry)) return undefined;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return `"${entry}" is no IP address or network (address/prefix length)`;
  if (prefix === undefined) return undefined;
  const bits = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > bits) return `"${entry}" has no prefix length of 0 to ${bits}`;
  return undefined;
}

/**
 * Whether the hop at `index` (0 nearest to Convene) with this address may name the client, as
 * Express compiles `trust proxy` from the same value; for readers outside Express (the signaling
 * upgrade).
 */
export function trustedProxies(trust: TrustProxy): (address: string, index: number) => boolean {
  if (trust === false) return () => false;
  if (typeof trust === 'number') return (_address, index) => index < trust;
  return proxyaddr.compile(trust);
}
