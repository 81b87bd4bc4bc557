/** The repository's copy of the IAB files is the official one in ../shared (skipped when that is absent). */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultTaxonomyDir, loadIabTaxonomies, TAXONOMY_FILES } from '../../../src/inference/classifier/taxonomy.js';

const SHARED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../shared/data/iab');

describe.skipIf(!existsSync(SHARED))('the official IAB files in ../shared', () => {
  it('are the files the repository ships, and parse to the same trees', () => {
    for (const file of Object.values(TAXONOMY_FILES)) {
      expect(readFileSync(path.join(defaultTaxonomyDir(), file)).equals(readFileSync(path.join(SHARED, file)))).toBe(true);
    }
    const shared = loadIabTaxonomies(SHARED);
    const ours = loadIabTaxonomies();
    expect(shared.content22.nodes).toEqual(ours.content22.nodes);
    expect(shared.audience11.nodes.length).toBe(ours.audience11.nodes.length);
    expect([...shared.content10To22]).toEqual([...ours.content10To22]);
  });
});
