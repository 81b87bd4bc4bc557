/**
 * How lease tables are claimed: read a few unleased candidates, then try a conditional
 * UPDATE … RETURNING on each until one answers a row. Both SQLite and PostgreSQL run that
 * UPDATE atomically, so of two workers racing for one row exactly one gets it back.
 */

/** How many candidates one claim reads. */
export const CLAIM_CANDIDATES = 8;

/**
 * Tries `claimOne` on the candidates, starting at a random one so that workers polling
 * together rarely collide, and answers the first row claimed.
 */
export async function claimFirst<T>(ids: readonly string[], claimOne: (id: string) => Promise<T | undefined>): Promise<T | undefined> {
  const offset = Math.floor(Math.random() * ids.length);
  for (let i = 0; i < ids.length; i++) {
    const row = await claimOne(ids[(offset + i) % ids.length]!);
    if (row !== undefined) return row;
  }
  return undefined;
}
