/**
 * Hash routes (`#/usage`, `#/batches/<id>`): the server serves one index.html and needs no
 * fallback route; a dozen lines rather than a router dependency.
 */
import { useEffect, useState } from 'react';

export interface Route {
  page: string;
  id: string | null;
}

export function parseRoute(hash: string): Route {
  const [page = '', id = null] = hash.replace(/^#\/?/, '').split('/');
  return { page: page || 'home', id: id ? decodeURIComponent(id) : null };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}
