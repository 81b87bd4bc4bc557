/**
 * The Layout table of docs/development.md follows the tree: every top folder of src/ and
 * every subject folder of src/domain has a row, and every path a row names exists.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DEVELOPMENT = readFileSync(path.join(ROOT, 'docs/development.md'), 'utf8');

const section = DEVELOPMENT.slice(DEVELOPMENT.indexOf('## Layout\n'), DEVELOPMENT.indexOf('## Import boundaries\n'));

/** The paths named in the first column of the table (`a`, `b/` → a, b). */
const listed: string[] = section
  .split('\n')
  .filter((line) => line.startsWith('| `'))
  .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\/$/, '')));

const foldersOf = (dir: string): string[] =>
  readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${dir}/${entry.name}`);

describe('the layout in docs/development.md', () => {
  it('is a table of more than a few rows, before the import boundaries', () => {
    expect(DEVELOPMENT.indexOf('## Layout\n')).toBeGreaterThan(0);
    expect(section.length).toBeGreaterThan(0);
    expect(listed.length).toBeGreaterThan(10);
  });

  it('has a row for every top folder of src/ and every folder of src/domain', () => {
    const folders = [...foldersOf('src'), ...foldersOf('src/domain')];
    expect(folders).toContain('src/domain/shared');
    const missing = folders.filter((folder) => !listed.includes(folder));
    expect(missing).toEqual([]);
  });

  it('names only paths that exist', () => {
    const absent = listed.filter((entry) => !existsSync(path.join(ROOT, entry)));
    expect(absent).toEqual([]);
  });
});
