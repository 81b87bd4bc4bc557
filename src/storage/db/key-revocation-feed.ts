/**
 * Key revocations across replicas on PostgreSQL: a revocation's transaction notifies
 * KEY_REVOKED_CHANNEL with the key's hash (api-keys.repository.ts; delivered only once it
 * commits), and every replica LISTENs on a connection of its own. A lost connection is
 * reported (the authenticator then keeps lookups briefly) and retried every second.
 */
import pg from 'pg';
import type { Logger } from 'pino';
import type { KeyRevocationFeed } from '../../domain/identity/api-key.types.js';

/** The channel revocations are announced on; the payload is the revoked key's SHA-256 hash. */
export const KEY_REVOKED_CHANNEL = 'sluice_key_revoked';

const RETRY_MS = 1_000;

type Handlers = Parameters<KeyRevocationFeed['start']>[0];

export class PostgresKeyRevocationFeed implements KeyRevocationFeed {
  #client: pg.Client | null = null;
  #retry: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(
    private readonly url: string,
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
  ) {}

  start(handlers: Handlers): void {
    void this.#listen(handlers);
  }

  async #listen(handlers: Handlers): Promise<void> {
    if (this.#closed) return;
    const client = new pg.Client({ connectionString: this.url });
    this.#client = client;
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      client.removeAllListeners('notification');
      void client.end().catch(() => {});
      if (this.#closed) return;
      handlers.live(false);
      this.logger.warn({ err: err?.message }, 'key revocation feed lost its PostgreSQL connection; retrying (lookups are kept at most 1 s meanwhile)');
      this.#retry = setTimeout(() => void this.#listen(handlers), RETRY_MS);
      this.#retry.unref();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message) => {
      if (message.channel === KEY_REVOKED_CHANNEL && message.payload) handlers.revoked(message.payload);
    });
    try {
      await client.connect();
      await client.query(`listen ${KEY_REVOKED_CHANNEL}`);
      if (!lost && !this.#closed) handlers.live(true);
    } catch (err) {
      onLost(err as Error);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#retry) clearTimeout(this.#retry);
    await this.#client?.end().catch(() => {});
  }
}
