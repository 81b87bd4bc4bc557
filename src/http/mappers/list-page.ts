/** The list envelope shared by every list route (`{object, data, first_id, last_id, has_more}`), and its `limit` rule. */
import { AppError } from '../../domain/shared/errors.js';
import type { Page } from '../../domain/shared/pagination.js';

export interface ListPage<W> {
  object: 'list';
  data: W[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export function toListPage<T extends { id: string }, W>(page: Page<T>, map: (item: T) => W): ListPage<W> {
  return {
    object: 'list',
    data: page.items.map(map),
    first_id: page.items[0]?.id ?? null,
    last_id: page.items[page.items.length - 1]?.id ?? null,
    has_more: page.hasMore,
  };
}

export const invalidLimit = (max: number) =>
  new AppError('invalid_request', `limit must be an integer between 1 and ${max}`, { code: 'invalid_limit', param: 'limit' });

/** A list's `limit` query value: absent → the default; anything but an integer in 1..max → 400 invalid_limit. */
export function readLimit(raw: string | undefined, max: number, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw)) throw invalidLimit(max);
  const limit = Number(raw);
  if (limit < 1 || limit > max) throw invalidLimit(max);
  return limit;
}
