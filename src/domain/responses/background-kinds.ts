/** The caller kind of a background response's run: the worker runs it as its creator, paid by its creator's payer. */
export {};

declare module '../identity/caller.js' {
  interface CallerKinds {
    background_response: true;
  }
}
