import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every relative link in every Markdown file of the repository resolves to a file (or
 * folder) inside it, and a `#fragment` into a Markdown file names one of its headings.
 * Links that leave the repository (`../` past its root, absolute paths, `file:` URLs) fail;
 * web links (`https:`, `mailto:`) are not followed.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Tracked Markdown files, and new ones not yet committed (but not ignored ones). */
function markdownFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z', '--', '*.md'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return [...new Set(out.split('\0').filter(Boolean))].filter((f) => fs.existsSync(path.join(ROOT, f))).sort();
}

/** The text without fenced code blocks and code spans: links there are examples, not links. */
function withoutCode(markdown: string): string {
  return markdown.replace(/^( {0,3})(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1?\2[^\n]*$/gm, '').replace(/(`+)[^`]*?\1/g, '');
}

/** Inline links and images `[text](target "title")`, and reference definitions `[x]: target`. */
function linkTargets(markdown: string): string[] {
  const text = withoutCode(markdown);
  const targets: string[] = [];
  for (const m of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+["'(][^)]*)?\)/g)) targets.push(m[1]!);
  for (const m of text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) targets.push(m[1]!);
  return targets;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to `-`, repeats numbered. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of withoutCode(markdown.replace(/`/g, '')).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = m[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Why a link from `file` (relative to the root) is broken, or undefined when it is fine. */
function problemOf(file: string, target: string): string | undefined {
  if (/^(https?|mailto):/i.test(target)) return undefined;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return 'a URL that is not a web link';
  if (target.startsWith('/') || target.startsWith('\\')) return 'an absolute path';
  const [rawPath = '', fragment] = target.split('#', 2) as [string, string | undefined];
  const linkPath = decodeURIComponent(rawPath.split('?', 1)[0]!);
  const resolved = path.resolve(ROOT, path.dirname(file), linkPath || path.basename(file));
  const inside = path.relative(ROOT, resolved);
  if (inside.startsWith('..') || path.isAbsolute(inside)) return 'leaves the repository';
  if (!fs.existsSync(resolved)) return 'no such file';
  if (fragment && resolved.endsWith('.md') && !headingAnchors(fs.readFileSync(resolved, 'utf8')).has(fragment.toLowerCase())) {
    return `no heading #${fragment}`;
  }
  return undefined;
}

describe('Markdown links', () => {
  it('reads links and anchors the way GitHub does', () => {
    expect(linkTargets('[a](docs/api.md#pacs) ![b](img/x.png "t") `[c](no.md)`\n\n```\n[d](no.md)\n```\n[e]: ../outside/NOTES.md\n')).toEqual([
      'docs/api.md#pacs',
      'img/x.png',
      '../outside/NOTES.md',
    ]);
    expect([...headingAnchors("# The agent's link\n## PACs (rows 10–12)\n## `GET` it\n## Notes\n## Notes\n")]).toEqual([
      'the-agents-link',
      'pacs-rows-1012',
      'get-it',
      'notes',
      'notes-1',
    ]);
    expect(problemOf('README.md', '../outside/NOTES.md')).toBe('leaves the repository');
    expect(problemOf('docs/pacs.md', '/etc/notes.md')).toBe('an absolute path');
    expect(problemOf('docs/pacs.md', 'api.md#no-such-heading')).toBe('no heading #no-such-heading');
    expect(problemOf('docs/pacs.md', 'api.md#pacs')).toBeUndefined();
  });

  it('finds the repository’s Markdown files', () => {
    const files = markdownFiles();
    expect(files).toContain('README.md');
    expect(files).toContain('docs/api.md');
    expect(files.some((f) => f.includes('node_modules'))).toBe(false);
  });

  it('resolves every relative link inside the repository', () => {
    const broken: string[] = [];
    for (const file of markdownFiles()) {
      for (const target of linkTargets(fs.readFileSync(path.join(ROOT, file), 'utf8'))) {
        const problem = problemOf(file, target);
        if (problem) broken.push(`${file}: ${target} (${problem})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
