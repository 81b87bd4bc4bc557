/** Loads an API resource for a page (data, error, loading, reload), and polls it while it moves. */
import { useCallback, useEffect, useState } from 'react';

export function useApi<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[]) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    load(controller.signal).then(
      (value) => {
        if (controller.signal.aborted) return;
        setData(value);
        setError(null);
        setLoading(false);
      },
      (err: unknown) => {
        if (controller.signal.aborted) return;
        setError(err);
        setLoading(false);
      },
    );
    return () => controller.abort();
  }, [...deps, generation]);
  return { data, error, loading, reload, setData };
}

/**
 * Reloads `everyMs` after each load ends, while `active`. Timed from the end of the last load,
 * not on a fixed interval: a fixed interval's reload aborts a load still under way, so on a
 * server or link slower than the period no answer would ever land and the page would freeze.
 */
export function usePolling(active: boolean, loading: boolean, reload: () => void, everyMs: number): void {
  useEffect(() => {
    if (!active || loading) return;
    const timer = setTimeout(reload, everyMs);
    return () => clearTimeout(timer);
  }, [active, loading, reload, everyMs]);
}
