import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { generateApiSchema, SCHEMA_FILE } from '../scripts/api-schema.ts';

/**
 * The dashboard's API types come from the server's own OpenAPI document. When a route or
 * schema changes, this fails until `pnpm --filter @mm/api-client gen:api` is run and the
 * result checked in, so the client cannot drift from the server.
 */
describe("the API client types", () => {
  it('equal a fresh generation from the server\'s OpenAPI document', async () => {
    const checkedIn = await fs.readFile(SCHEMA_FILE, 'utf8');
    const fresh = await generateApiSchema();
    expect(checkedIn === fresh, 'src/schema.d.ts is stale: run `npx -y pnpm@10 --filter @mm/api-client gen:api`').toBe(true);
  });
});
