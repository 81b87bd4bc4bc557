/** The list envelope shared by every list route: `{object, data, first_id, last_id, has_more}`. */
export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

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
