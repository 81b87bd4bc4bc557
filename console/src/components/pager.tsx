/**
 * A list read a page at a time with the API's `after` cursor: the cursors of the pages
 * before this one are kept, so "Newer" goes back and "Older" goes on while `has_more`.
 */
import { useCallback, useState } from 'react';
import type { List } from '../lib/types.js';

export function useCursor() {
  const [cursors, setCursors] = useState<string[]>([]);
  const reset = useCallback(() => setCursors([]), []);
  return {
    after: cursors[cursors.length - 1],
    atStart: cursors.length === 0,
    reset,
    back: () => setCursors((c) => c.slice(0, -1)),
    next: (lastId: string) => setCursors((c) => [...c, lastId]),
  };
}

/** Newer and Older, when there is more than one page. */
export function Pager({ cursor, page, label }: { cursor: ReturnType<typeof useCursor>; page: List<unknown> | null; label: string }) {
  if (cursor.atStart && !page?.has_more) return null;
  return (
    <div className="actions" role="group" aria-label={`${label} pages`}>
      <button type="button" className="secondary" disabled={cursor.atStart} onClick={cursor.back}>
        Newer <span className="visually-hidden">{label}</span>
      </button>
      <button type="button" className="secondary" disabled={!page?.has_more} onClick={() => page?.last_id && cursor.next(page.last_id)}>
        Older <span className="visually-hidden">{label}</span>
      </button>
    </div>
  );
}
