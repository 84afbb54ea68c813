/**
 * Issue 26, item 2: the client's every call is typed by the shared API client's generated
 * schema. Type-checks the client's sources against a copy of packages/api-client whose
 * schema renames fields the client reads and sends: the type-check must fail there (and
 * pass against the unchanged copy, so the failure is the rename's).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../../test/support/processes.ts';

const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');

describe("the client's calls are typed by the server's schema", () => {
  let dir: string;
  beforeAll(async () => {
    // Inside packages/api-client (ignored by git) so the copy resolves openapi-fetch as the original does.
    dir = path.join(repoRoot, 'packages/api-client/.tmp', `cli-types-${process.pid}`);
    await fs.mkdir(dir, { recursive: true });
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  /** tsc over packages/cli/src with `@mm/api-client` resolved to a copy whose schema is `edit`ed. */
  async function typeCheck(name: string, edit: (schema: string) => string): Promise<{ status: number | null; out: string }> {
    const copy = path.join(dir, name);
    await fs.cp(path.join(repoRoot, 'packages/api-client/src'), copy, { recursive: true });
    const schemaFile = path.join(copy, 'schema.d.ts');
    await fs.writeFile(schemaFile, edit(await fs.readFile(schemaFile, 'utf8')));
    const config = path.join(repoRoot, `.tmp-tsconfig-cli-${name}-${process.pid}.json`); // extends needs a path from the root
    await fs.writeFile(
      config,
      JSON.stringify({
        extends: './tsconfig.base.json',
        compilerOptions: { noEmit: true, paths: { '@mm/api-client': [path.join(copy, 'index.ts')] } },
        include: ['packages/cli/src/**/*.ts'],
      }),
    );
    try {
      const r = spawnSync(process.execPath, [tsc, '-p', config], { cwd: repoRoot, encoding: 'utf8' });
      return { status: r.status, out: `${r.stdout}${r.stderr}` };
    } finally {
      await fs.rm(config, { force: true });
    }
  }

  it('type-checks against the schema as it is, and fails when a field it uses is renamed', async () => {
    const same = await typeCheck('same', (s) => s);
    expect(same.out).toBe('');
    expect(same.status).toBe(0);

    // Operation.finished_at (read by `mm ops show`) and CreateBoard.name (sent by `mm boards add`).
    const renamed = await typeCheck('renamed', (s) =>
      s.replace(/(\n        Operation: \{[\s\S]*?)\n(\s+)finished_at:/, '$1\n$2ended_at:').replace(/(\n        CreateBoard: \{\s*)name:/, '$1title:'),
    );
    expect(renamed.status).not.toBe(0);
    expect(renamed.out).toMatch(/packages\/cli\/src\/commands\/boards\.ts.*finished_at/);
    expect(renamed.out).toMatch(/packages\/cli\/src\/commands\/boards\.ts.*'name' does not exist/);
  }, 240_000);
});
