import openapiTS, { astToString } from 'openapi-typescript';
import { openApiDocument } from './openapi-document.ts';

export const SCHEMA_FILE = new URL('../src/schema.d.ts', import.meta.url);

const HEADER =
  '// Generated from the server\'s OpenAPI document by `pnpm --filter @mm/api-client gen:api`.\n' +
  '// Do not edit: a test fails when this file differs from a fresh generation.\n\n';

/** The TypeScript types of the server's API, as openapi-typescript writes them. */
export async function generateApiSchema(): Promise<string> {
  const ast = await openapiTS((await openApiDocument()) as unknown as Parameters<typeof openapiTS>[0]);
  return HEADER + astToString(ast);
}
