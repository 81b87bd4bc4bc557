/**
 * The `anthropic-beta` values a request names (comma-separated, the header possibly
 * repeated), for an upstream that speaks Messages to add to its deployment's own. A value
 * that is not a plain flag name (1–128 letters, digits, `.`, `_`, `-`) is not kept, and
 * at most 32 are: the header never refuses a call here (the provider judges the flags).
 */
const BETA = /^[A-Za-z0-9._-]{1,128}$/;
const MAX_BETAS = 32;

export function betasOf(header: string | string[] | undefined): string[] {
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  const betas: string[] = [];
  for (const value of values) {
    for (const raw of value.split(',')) {
      const beta = raw.trim();
      if (BETA.test(beta) && !betas.includes(beta) && betas.length < MAX_BETAS) betas.push(beta);
    }
  }
  return betas;
}
