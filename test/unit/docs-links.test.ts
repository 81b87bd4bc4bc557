/**
 * Every relative link in README.md and docs/*.md resolves: the file it names exists, and
 * its `#anchor`, if any, is a heading of the target file under GitHub's anchor rules. The
 * README's map of docs/ names every page there.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '../..');
const PAGES = ['README.md', ...readdirSync(path.join(REPO, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** GitHub's heading anchor: lower case, punctuation other than `-` and `_` dropped, spaces to `-`, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^(#{1,6}) (.+)$/.exec(line);
    if (!heading) continue;
    const base = heading[2]!.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    found.add(n === 0 ? base : `${base}-${n}`);
  }
  return found;
}

/** The targets of a page's markdown links, outside code fences and code spans. */
function linkTargets(markdown: string): string[] {
  let fenced = false;
  const targets: string[] = [];
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    const prose = line.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) targets.push(match[1]!);
  }
  return targets;
}

function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}

const read = (relative: string) => readFileSync(path.join(REPO, relative), 'utf8');

describe('links in README.md and docs/', () => {
  it('finds the pages and their links', () => {
    expect(PAGES).toContain('docs/configuration.md');
    const internal = PAGES.flatMap((page) => linkTargets(read(page)).filter((t) => !isExternal(t)));
    expect(internal.length).toBeGreaterThan(40);
  });

  for (const page of PAGES) {
    it(`${page}: every relative link and anchor resolves`, () => {
      const broken: string[] = [];
      for (const target of linkTargets(read(page)).filter((t) => !isExternal(t))) {
        const [file, anchor] = target.split('#', 2) as [string, string | undefined];
        const resolved = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
        if (!existsSync(path.join(REPO, resolved))) {
          broken.push(`${target}: no file ${resolved}`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!resolved.endsWith('.md') || !anchors(read(resolved)).has(anchor)) broken.push(`${target}: no heading #${anchor} in ${resolved}`);
      }
      expect(broken).toEqual([]);
    });
  }

  it("the README's map of docs/ names every page", () => {
    const linked = new Set(linkTargets(read('README.md')).map((t) => t.split('#')[0]));
    for (const page of PAGES.filter((p) => p.startsWith('docs/'))) expect(linked, page).toContain(page);
  });
});
