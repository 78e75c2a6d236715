/**
 * The contract's page-numbered listings (`page`, `per_page`, total in the answer): the page of rows
 * and the listing's size come from one filtered query, so the two cannot count different rows.
 */
import type { SelectQueryBuilder } from 'kysely';

/**
 * `filtered` is the listing before any select (FROM, joins, WHERE); `ordered` is it with the
 * selected columns and an order whose last key is unique, so pages neither overlap nor skip.
 * Both run at once, so pass the database, not a transaction (one connection).
 */
export async function countAndPage<Row>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any table set: the helper only counts and pages
  filtered: SelectQueryBuilder<any, any, object>,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as filtered
  ordered: SelectQueryBuilder<any, any, Row>,
  { page, per_page }: { page: number; per_page: number },
): Promise<{ total: number; rows: Row[] }> {
  const [{ count }, rows] = await Promise.all([
    filtered.select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow(),
    ordered
      .limit(per_page)
      .offset((page - 1) * per_page)
      .execute(),
  ]);
  return { total: Number(count), rows };
}
