/**
 * The storefront's caller and payer kinds: an agent with its access token, a receipt, or
 * a visitor presenting neither (who may browse and buy, not call); paid from the agent's
 * Credits or the receipt's credit.
 */
export {};

declare module '../identity/caller.js' {
  interface CallerKinds {
    storefront_agent: true;
    storefront_visitor: true;
    receipt: true;
  }
  interface PayerKinds {
    agent: true;
    receipt: true;
  }
}
