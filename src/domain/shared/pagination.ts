/** One page of a list, newest first by id; the wire envelope is `src/http/mappers/list-page.ts`. */
export interface Page<T> {
  items: T[];
  hasMore: boolean;
}
