/** The reasoning seal: AES-256-GCM under the first key, opened by any listed key; the data directory's generated key. */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AesReasoningSeal, createReasoningSeal, GENERATED_KEY_FILE } from '../../src/adapters/crypto/reasoning-seal.js';

const OLD = 'the key we used until last week';
const NEW = 'the key we seal with from today';
const refusal = (param: string) => `${param} was not sealed by this server or was altered; send reasoning items back as they were returned`;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('AesReasoningSeal', () => {
  it('opens what it sealed; each seal differs (a fresh nonce), and none shows the text', () => {
    const seal = new AesReasoningSeal([NEW]);
    const a = seal.seal('secret thoughts');
    const b = seal.seal('secret thoughts');
    expect(a).not.toBe(b);
    expect(a).not.toContain('secret');
    expect(seal.open(a, 'p')).toBe('secret thoughts');
    expect(seal.open(seal.seal(''), 'p')).toBe('');
  });

  it('rotation: the previous key still opens what it sealed, the new one seals; a dropped key no longer opens', () => {
    const before = new AesReasoningSeal([OLD]).seal('older reasoning');
    const rotated = new AesReasoningSeal([NEW, OLD]);
    expect(rotated.open(before, 'p')).toBe('older reasoning');
    const after = rotated.seal('newer reasoning');
    expect(new AesReasoningSeal([NEW]).open(after, 'p')).toBe('newer reasoning');
    expect(() => new AesReasoningSeal([NEW]).open(before, 'input[2].encrypted_content')).toThrow(refusal('input[2].encrypted_content'));
  });

  it('refuses altered, truncated and foreign content with one message naming the field', () => {
    const seal = new AesReasoningSeal([NEW]);
    const sealed = seal.seal('x'.repeat(40));
    // A character well inside the ciphertext: the last one may carry only unused padding bits.
    const at = sealed.length - 5;
    const altered = sealed.slice(0, at) + (sealed[at] === 'A' ? 'B' : 'A') + sealed.slice(at + 1);
    for (const bad of [altered, sealed.slice(0, 30), 'sluice-rs1.', 'rs_plain', new AesReasoningSeal([OLD]).seal('x')]) {
      expect(() => seal.open(bad, 'q')).toThrow(refusal('q'));
    }
  });
});

describe('createReasoningSeal', () => {
  it('without configured keys, generates one in the data directory at first use (0600) and reads it back after a restart', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-seal-'));
    dirs.push(dir);
    const first = createReasoningSeal([], dir);
    expect(() => statSync(join(dir, GENERATED_KEY_FILE))).toThrow();
    const sealed = first.seal('kept across restarts');
    expect(statSync(join(dir, GENERATED_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, GENERATED_KEY_FILE), 'utf8')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(createReasoningSeal([], dir).open(sealed, 'p')).toBe('kept across restarts');
    expect(() => createReasoningSeal([NEW], dir).open(sealed, 'p')).toThrow(refusal('p'));
  });
});
