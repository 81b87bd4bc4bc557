/**
 * Preloaded into Portkey's gateway by the overhead bench (`node --import`). Portkey's
 * published gateway (1.15) answers every streamed chat call 500 on Node: it appends its
 * `x-portkey-*` headers to the engine's `fetch` response, whose headers the fetch standard
 * makes immutable ("TypeError: immutable" in its log; reported upstream, unfixed in the
 * published build). This does what the proposed upstream fix does, in one place: a streamed
 * response from `fetch` is handed on as a new `Response` over the same body, whose headers
 * may be changed. Non-streamed responses are passed through untouched.
 */
const upstreamFetch = globalThis.fetch;

globalThis.fetch = async function fetchWithMutableStreamHeaders(...args) {
  const response = await upstreamFetch.apply(this, args);
  if (!response.headers.get('content-type')?.includes('text/event-stream')) return response;
  return new globalThis.Response(response.body, { status: response.status, statusText: response.statusText, headers: new globalThis.Headers(response.headers) });
};
