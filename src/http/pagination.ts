/**
 * The `Link` header of paginated lists (docs/architecture.md §4; format as the reference: entries joined by a
 * bare comma). A link names only the parameters the operation declares (the handler's validated
 * query), never whatever else the request carried: every unknown parameter was copied into each of
 * four links, so a 14 KB query made 56 KB of headers. Links are absolute on `[http] public_url`;
 * without it, on the request's scheme and Host when the Host is a well-formed host, and relative to
 * the request otherwise (RFC 8288 allows a URI reference), so a forged Host never enters a link.
 */
import type { Request } from 'express';

export interface PageQuery {
  page: number;
  per_page: number;
}

/** The values of an operation's declared query parameters, as validated (coerced) for its handler. */
export type DeclaredQuery = Record<string, unknown>;

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/** A host as a URL's authority holds it (RFC 3986 §3.2.2): a DNS name or IPv4, or an IPv6 literal in brackets, and a port. */
const HOST = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*\\.?|\\[[0-9A-Fa-f:.]+\\])(?::(\\d{1,5}))?$`);

function isWellFormedHost(host: string | undefined): host is string {
  const match = host !== undefined && host.length <= 261 ? HOST.exec(host) : null;
  return match !== null && (match[1] === undefined || Number(match[1]) <= 65535);
}

/** Where links point: the public URL's origin, the request's own when its Host is well formed, else '' (relative). */
export function linkOrigin(req: Request, publicUrl: string | undefined): string {
  if (publicUrl !== undefined) return new URL(publicUrl).origin;
  const host = req.get('host');
  if (!isWellFormedHost(host)) return '';
  // req.protocol reads X-Forwarded-Proto when `[http] trust_proxy` is on: only the two schemes are taken
  const scheme = req.protocol === 'https' ? 'https' : 'http';
  return `${scheme}://${host}`;
}

/**
 * This request's path on the link origin, with the declared parameters the request named (`query`,
 * as validated: not the defaults it was given) and then `set` as its query.
 */
export function linkTo(req: Request, publicUrl: string | undefined, query: DeclaredQuery, set: DeclaredQuery): string {
  // the path as routed, normalised (percent-encoded) by the URL parser
  const path = new URL(req.originalUrl.split('?')[0]!, 'http://localhost').pathname;
  const sent = req.query as object; // once: express parses the query string on each read of req.query
  const named = Object.entries(query).filter(([name]) => Object.hasOwn(sent, name) && !Object.hasOwn(set, name));
  const search = new URLSearchParams();
  for (const [name, value] of [...named, ...Object.entries(set)]) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item !== undefined && item !== null) search.append(name, String(item));
    }
  }
  const text = search.toString();
  return `${linkOrigin(req, publicUrl)}${path}${text ? `?${text}` : ''}`;
}

/** `first`/`prev` when past page 1, `next`/`last` while pages remain; undefined when there is nothing to link. */
function pageLinks(to: (page: number) => string, { page }: PageQuery, total: number, perPage: number): string | undefined {
  const last = Math.max(1, Math.ceil(total / perPage));
  const link = (p: number, rel: string) => `<${to(p)}>; rel="${rel}"`;
  const links: string[] = [];
  if (page > 1) links.push(link(1, 'first'), link(Math.min(page - 1, last), 'prev'));
  if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
  return links.length > 0 ? links.join(',') : undefined;
}

/** A `Link` response header, or none when there is nothing to link. */
export function linkHeader(link: string | undefined): Record<string, string> {
  return link === undefined ? {} : { link };
}

/** The requested page, with the contract's defaults (page 1, 30 per page). */
export function pageQuery(query: { page?: number; per_page?: number }): PageQuery {
  return { page: query.page ?? 1, per_page: query.per_page ?? 30 };
}

/** The 200 answer of a page-numbered listing: the page's items, and `Link` to the other pages. */
export function pageAnswer<T>(req: Request, publicUrl: string | undefined, query: DeclaredQuery, page: PageQuery, result: { items: T[]; total: number }) {
  const to = (p: number) => linkTo(req, publicUrl, query, { page: p, per_page: page.per_page });
  const link = pageLinks(to, page, result.total, page.per_page);
  return { status: 200 as const, body: result.items, headers: linkHeader(link) };
}
