/**
 * The reasoning seal (domain/responses/reasoning-seal.port.ts) with AES-256-GCM from
 * node:crypto: `sluice-rs1.` then base64url of a 12-byte nonce, the 16-byte tag and the
 * ciphertext. The first key seals; every key opens, so a rotated-out key keeps the items
 * it sealed readable while it stays listed. Each configured secret is stretched to a
 * 256-bit key with HKDF-SHA256. Without configured secrets, one is generated once and kept
 * in the data directory (`reasoning-seal.key`, mode 0600), so restarts keep opening what
 * was sealed; replicas that do not share that directory must share `responses.reasoning_keys`.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ReasoningSeal } from '../../domain/responses/reasoning-seal.port.js';
import { invalidRequest } from '../../domain/shared/errors.js';

const PREFIX = 'sluice-rs1.';
const NONCE = 12;
const TAG = 16;
/** Binds a sealed text to its purpose: a key shared with another use cannot be fed one of its ciphertexts. */
const AAD = Buffer.from('sluice reasoning v1');

export const GENERATED_KEY_FILE = 'reasoning-seal.key';

const keyOf = (secret: string): Buffer => Buffer.from(hkdfSync('sha256', secret, 'sluice-reasoning-seal', 'aes-256-gcm v1', 32));

export class AesReasoningSeal implements ReasoningSeal {
  readonly #keys: Buffer[];

  /** `secrets`: the current first, then the previous ones (non-empty). */
  constructor(secrets: readonly string[]) {
    if (secrets.length === 0) throw new Error('the reasoning seal needs at least one key');
    this.#keys = secrets.map(keyOf);
  }

  seal(text: string): string {
    const nonce = randomBytes(NONCE);
    const cipher = createCipheriv('aes-256-gcm', this.#keys[0]!, nonce).setAAD(AAD);
    const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([nonce, cipher.getAuthTag(), sealed]).toString('base64url');
  }

  open(sealed: string, param: string): string {
    const raw = sealed.startsWith(PREFIX) ? Buffer.from(sealed.slice(PREFIX.length), 'base64url') : null;
    if (raw && raw.length >= NONCE + TAG) {
      const nonce = raw.subarray(0, NONCE);
      const tag = raw.subarray(NONCE, NONCE + TAG);
      const body = raw.subarray(NONCE + TAG);
      for (const key of this.#keys) {
        try {
          const decipher = createDecipheriv('aes-256-gcm', key, nonce).setAAD(AAD).setAuthTag(tag);
          return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
        } catch {
          // Another key's, or altered: the next key may open it.
        }
      }
    }
    throw invalidRequest(`${param} was not sealed by this server or was altered; send reasoning items back as they were returned`, param);
  }
}

/** The configured secrets, or the one generated and kept in `dataDir` (created on first use). */
export function reasoningSecrets(configured: readonly string[], dataDir: string): string[] {
  if (configured.length > 0) return [...configured];
  const file = path.join(dataDir, GENERATED_KEY_FILE);
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    // `wx`: a replica that lost the race reads the winner's key below.
    try {
      writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return [readFileSync(file, 'utf8').trim()];
}

/**
 * The server's seal: under the configured secrets, or under the data directory's generated
 * one, read (or created) at the first seal or open, so a server whose clients never ask
 * for sealed reasoning writes no key file.
 */
export function createReasoningSeal(configured: readonly string[], dataDir: string): ReasoningSeal {
  let seal: AesReasoningSeal | null = configured.length > 0 ? new AesReasoningSeal(configured) : null;
  const current = (): AesReasoningSeal => (seal ??= new AesReasoningSeal(reasoningSecrets(configured, dataDir)));
  return {
    seal: (text) => current().seal(text),
    open: (sealed, param) => current().open(sealed, param),
  };
}
