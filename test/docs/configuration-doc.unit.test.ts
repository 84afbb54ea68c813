import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentEnvSchema } from '../../packages/agent/src/config.ts';
import { configSchema } from '../../packages/server/src/config.ts';

/**
 * docs/configuration.md is the one reference of settings. Its `## ` sections each document
 * one program in `| Setting | Default | Meaning |` tables; a row's first cell names one or
 * more settings as code spans. The control plane's and the agent's sections are held to
 * their zod schemas (a setting missing from the page fails, and so does a documented one
 * the schema lacks; a schema default must appear in the row's Default cell); the other
 * programs' sections to the environment variables their sources read.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const CONFIG_DOC = path.join(ROOT, 'docs/configuration.md');

interface DocumentedSetting {
  name: string;
  /** The code spans of the row's Default cell. */
  defaults: string[];
}

/** Settings per `## ` section, in the page's order. */
function settingsBySection(markdown: string): Map<string, DocumentedSetting[]> {
  const sections = new Map<string, DocumentedSetting[]>();
  let current: DocumentedSetting[] | undefined;
  for (const line of markdown.split('\n')) {
    const heading = /^## (.+?)\s*$/.exec(line);
    if (heading) {
      current = [];
      sections.set(heading[1]!, current);
      continue;
    }
    if (!current || !line.startsWith('|') || /^\|\s*(Setting\s*\||-)/.test(line)) continue;
    const [, nameCell = '', defaultCell = ''] = line.split(/(?<!\\)\|/);
    const defaults = [...defaultCell.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);
    for (const m of nameCell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) current.push({ name: m[1]!, defaults });
  }
  return sections;
}

/** Every source file under `dir` (recursively), concatenated. */
function sourcesUnder(...dirs: string[]): string {
  const texts: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== 'fixtures') walk(full);
      else if (/\.(ts|mts|mjs|py)$/.test(entry.name) || (entry.isFile() && dir.endsWith('/bin'))) texts.push(fs.readFileSync(full, 'utf8'));
    }
  };
  for (const dir of dirs) walk(path.join(ROOT, dir));
  return texts.join('\n');
}

/** Environment variables a source reads as `env.NAME` (also `process.env.NAME`), or in Python as `environ.get("NAME"` / `environ["NAME"]`. */
function envReadsIn(source: string): Set<string> {
  return new Set([
    ...[...source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b/g)].map((m) => m[1]!),
    ...[...source.matchAll(/\benviron(?:\.get\(|\[)\s*["']([A-Z][A-Z0-9_]*)["']/g)].map((m) => m[1]!),
  ]);
}

function defaultsOf(schema: { safeParse(v: unknown): { success: boolean; data?: unknown } }): Record<string, unknown> {
  const parsed = schema.safeParse({});
  if (!parsed.success) throw new Error('the schema does not accept an empty environment');
  return parsed.data as Record<string, unknown>;
}

/** How a schema default is written in the Default column. */
function asDocumented(value: unknown): string {
  return typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
}

const SCHEMA_SECTIONS = {
  'The control plane': { keys: Object.keys(configSchema.shape), defaults: defaultsOf(configSchema), source: 'packages/server/src/config.ts' },
  'The board agent': { keys: Object.keys(agentEnvSchema.shape), defaults: defaultsOf(agentEnvSchema), source: 'packages/agent/src/config.ts' },
};

/** Sections held to the sources of a program that reads the environment without a schema. */
const SOURCE_SECTIONS = {
  'The command-line client': { dirs: ['packages/cli/src'], allReadsDocumented: true },
  'The GPIO motor script': { dirs: ['packages/gpio-motor/src'], allReadsDocumented: true },
  'The webcam script': { dirs: ['packages/webcam/src'], allReadsDocumented: true },
  'The runner': { dirs: ['packages/runner/mm-runner'], allReadsDocumented: true },
  'The tests': { dirs: ['test', 'packages/server/test', 'packages/agent/test', 'packages/dashboard/test', 'packages/runner/test'], allReadsDocumented: false },
};

describe('docs/configuration.md', () => {
  const sections = settingsBySection(fs.readFileSync(CONFIG_DOC, 'utf8'));

  it('reads the tables it documents', () => {
    const sample = [
      '## A',
      '| Setting | Default | Meaning |',
      '|---|---|---|',
      '| `HOST`, `PORT` | `127.0.0.1`, `8000` | where `X` listens |',
      'text with `NOT_A_ROW`',
      '## B',
      '| `MM_X` | unset | a \\| pipe |',
    ].join('\n');
    expect(settingsBySection(sample)).toEqual(
      new Map([
        ['A', [{ name: 'HOST', defaults: ['127.0.0.1', '8000'] }, { name: 'PORT', defaults: ['127.0.0.1', '8000'] }]],
        ['B', [{ name: 'MM_X', defaults: [] }]],
      ]),
    );
  });

  it('has only sections this test knows how to check', () => {
    const known = new Set([...Object.keys(SCHEMA_SECTIONS), ...Object.keys(SOURCE_SECTIONS)]);
    const unchecked = [...sections].filter(([title, rows]) => rows.length > 0 && !known.has(title)).map(([title]) => title);
    expect(unchecked, 'a section with settings that no schema or source holds (add it to this test)').toEqual([]);
    for (const title of known) expect(sections.get(title)?.length, title).toBeGreaterThan(0);
  });

  for (const [title, { keys, defaults, source }] of Object.entries(SCHEMA_SECTIONS)) {
    describe(title, () => {
      const rows = () => sections.get(title) ?? [];

      it(`documents every setting of ${source}`, () => {
        const documented = new Set(rows().map((r) => r.name));
        expect(keys.filter((k) => !documented.has(k)).sort(), `settings of ${source} missing from the page`).toEqual([]);
      });

      it(`documents no setting that ${source} lacks`, () => {
        const exists = new Set(keys);
        expect(rows().map((r) => r.name).filter((n) => !exists.has(n)).sort(), `documented but not in ${source}`).toEqual([]);
      });

      it('documents each setting once', () => {
        const names = rows().map((r) => r.name);
        expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
      });

      it("shows the schema's default of every setting that has one", () => {
        const wrong = rows()
          .filter((r) => defaults[r.name] !== undefined && !r.defaults.includes(asDocumented(defaults[r.name])))
          .map((r) => `${r.name}: the Default cell needs \`${asDocumented(defaults[r.name])}\``);
        expect(wrong).toEqual([]);
      });
    });
  }

  for (const [title, { dirs, allReadsDocumented }] of Object.entries(SOURCE_SECTIONS)) {
    describe(title, () => {
      const source = sourcesUnder(...dirs);

      it(`documents only settings that ${dirs.join(', ')} read`, () => {
        const phantom = (sections.get(title) ?? []).map((r) => r.name).filter((n) => !new RegExp(`\\b${n}\\b`).test(source));
        expect(phantom.sort()).toEqual([]);
      });

      if (allReadsDocumented) {
        it(`documents every env.NAME that ${dirs.join(', ')} read`, () => {
          const documented = new Set((sections.get(title) ?? []).map((r) => r.name));
          expect([...envReadsIn(source)].filter((n) => !documented.has(n)).sort()).toEqual([]);
        });
      }
    });
  }
});
