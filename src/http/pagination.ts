/**
 * Page pagination's `Link` header (docs/architecture.md §4; format as the reference: entries joined by a bare
 * comma, absolute URLs that keep the other query parameters).
 */
import type { Request } from 'express';

export interface PageQuery {
  page: number;
  per_page: number;
}

export function requestUrl(req: Request, publicUrl?: string): URL {
  const base = publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
  return new URL(req.originalUrl, base.endsWith('/') ? base : `${base}/`);
}

function withParams(url: URL, params: Record<string, string>): string {
  const next = new URL(url);
  for (const [k, v] of Object.entries(params)) next.searchParams.set(k, v);
  return next.toString();
}

/** `first`/`prev` when past page 1, `next`/`last` while pages remain; undefined when there is nothing to link. */
function pageLinks(url: URL, { page, per_page }: PageQuery, total: number): string | undefined {
  const last = Math.max(1, Math.ceil(total / per_page));
  const link = (p: number, rel: string) =>
    `<${withParams(url, { page: String(p), per_page: String(per_page) })}>; rel="${rel}"`;
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
export function pageAnswer<T>(req: Request, publicUrl: string | undefined, page: PageQuery, result: { items: T[]; total: number }) {
  const link = pageLinks(requestUrl(req, publicUrl), page, result.total);
  return { status: 200 as const, body: result.items, headers: linkHeader(link) };
}
