/** The README's table of contents links every `##` section, and every link lands on a heading (GitHub's anchors). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const README = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');

/** GitHub's heading anchor: lower case, punctuation other than `-` and `_` dropped, spaces to `-`, repeats numbered. */
function anchors(markdown: string): Map<string, string> {
  const seen = new Map<string, number>();
  const byAnchor = new Map<string, string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^(#{1,6}) (.+)$/.exec(line);
    if (!heading) continue;
    const base = heading[2]!.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    byAnchor.set(n === 0 ? base : `${base}-${n}`, line);
  }
  return byAnchor;
}

const contents = README.slice(README.indexOf('**Contents:**'), README.indexOf('\n## '));
const links = [...contents.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);

describe('README contents', () => {
  it('comes before the first section and links every ## section', () => {
    expect(README.indexOf('**Contents:**')).toBeGreaterThan(0);
    const sections = [...anchors(README)].filter(([, line]) => line.startsWith('## ')).map(([anchor]) => anchor);
    expect(sections.length).toBeGreaterThan(5);
    for (const section of sections) expect(links, section).toContain(section);
  });

  it('links only headings that exist', () => {
    const known = anchors(README);
    for (const link of links) expect(known.has(link), link).toBe(true);
  });
});
