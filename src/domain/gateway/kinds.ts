/** The gateway's caller and payer kinds: the buying agent, paid for by the intermediary that signed its request. */
export {};

declare module '../identity/caller.js' {
  interface CallerKinds {
    gateway_agent: true;
  }
  interface PayerKinds {
    intermediary: true;
  }
}
