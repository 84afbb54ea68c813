// Regenerates src/schema.d.ts from the server's OpenAPI document.
import fs from 'node:fs/promises';
import { generateApiSchema, SCHEMA_FILE } from './api-schema.ts';

await fs.mkdir(new URL('.', SCHEMA_FILE), { recursive: true });
await fs.writeFile(SCHEMA_FILE, await generateApiSchema());
console.log(`wrote ${SCHEMA_FILE.pathname}`);
