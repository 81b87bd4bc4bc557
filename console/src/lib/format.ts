/** Display formats shared by the pages. */
export function usd(value: number): string {
  const digits = Math.abs(value) > 0 && Math.abs(value) < 0.01 ? 6 : 2;
  return `$${value.toFixed(digits)}`;
}

export const count = (value: number): string => value.toLocaleString('en-US');

/** A Unix-seconds time as `YYYY-MM-DD HH:MM` UTC, or an em dash for none. */
export function time(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  return new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ');
}

export function bytes(value: number): string {
  const units = ['B', 'KB', 'MB', 'GB'];
  let n = value;
  let unit = 0;
  while (n >= 1024 && unit < units.length - 1) {
    n /= 1024;
    unit++;
  }
  return `${unit === 0 ? n : n.toFixed(1)} ${units[unit]}`;
}
