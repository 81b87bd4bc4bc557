/** OIDC sign-ins between their start and their callback (migration 0017), each taken once. */
import type { Database } from '../database.js';
import type { SignInFlow, SignInFlowStore } from '../../../domain/console/identity-provider.port.js';

export class SignInFlowsRepository implements SignInFlowStore {
  constructor(private readonly database: Database) {}

  async insert(idHash: string, flow: SignInFlow, expiresAtMs: number): Promise<void> {
    await this.database.db.deleteFrom('sign_in_flows').where('expires_at', '<=', Date.now()).execute();
    await this.database.db
      .insertInto('sign_in_flows')
      .values({ id_hash: idHash, state: flow.state, nonce: flow.nonce, code_verifier: flow.codeVerifier, redirect_url: flow.redirectUrl, expires_at: expiresAtMs })
      .execute();
  }

  /** Deleted and returned in one statement, so two callbacks racing with one flow cannot both have it. */
  async take(idHash: string, nowMs: number): Promise<SignInFlow | undefined> {
    const row = await this.database.db.deleteFrom('sign_in_flows').where('id_hash', '=', idHash).returningAll().executeTakeFirst();
    if (!row || Number(row.expires_at) <= nowMs) return undefined;
    return { state: row.state, nonce: row.nonce, codeVerifier: row.code_verifier, redirectUrl: row.redirect_url };
  }
}
