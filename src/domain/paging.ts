/**
 * The contract's page-numbered listings, as every domain concept lists them: which page is asked
 * for, and what a page answers (its items and the listing's total).
 */

export interface PageRequest {
  page: number;
  per_page: number;
}

export interface Page<T> {
  items: T[];
  total: number;
}
