/**
 * Purchase amounts: `amountUsd` on the wire is a string of whole cents; inside, integer
 * micro-dollars. USDC has 6 decimals, so one micro-dollar is one atomic USDC unit.
 */
import { storefrontError } from '../shared/storefront-errors.js';

const AMOUNT = /^(0|[1-9]\d{0,8})(?:\.(\d+))?$/;
export const CARD_MINIMUM_MICROS = 500_000;

/** The amount in micro-dollars, or the spec's purchase error. */
export function parseAmountUsd(value: unknown): number {
  if (value === undefined || value === null) throw storefrontError('invalid_request', 'amount_required', 'amountUsd is required');
  if (typeof value !== 'string') throw storefrontError('invalid_request', 'invalid_request', 'amountUsd must be a string of dollars, e.g. "5.00"');
  const match = AMOUNT.exec(value);
  if (!match) throw storefrontError('invalid_request', 'invalid_request', 'amountUsd must be a non-negative decimal string, e.g. "5.00"');
  const fraction = match[2] ?? '';
  if (fraction.length > 2 && /[1-9]/.test(fraction.slice(2))) {
    throw storefrontError('invalid_request', 'amount_not_cent_increment', 'amountUsd must be a whole number of cents');
  }
  const cents = Number(match[1]) * 100 + Number(fraction.slice(0, 2).padEnd(2, '0'));
  return cents * 10_000;
}

/** "12.34" for 12_340_000 micro-dollars (balances may hold fractions of a cent: shown to the micro when they do). */
export function formatUsd(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / 1_000_000);
  const fraction = String(abs % 1_000_000).padStart(6, '0');
  const shown = fraction.slice(2) === '0000' ? fraction.slice(0, 2) : fraction.replace(/0+$/, '');
  return `${sign}${whole}.${shown}`;
}
