// `pnpm --filter @mm/runner gen:schema`: writes mm-runner/schema/mm-runner-1.schema.json from
// the zod schema (src/parameter-file.ts). A test fails while the file is stale.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { JSON_SCHEMA_FILE, parameterJsonSchemaText } from '../src/json-schema.ts';

const file = path.join(path.dirname(path.dirname(fileURLToPath(import.meta.url))), JSON_SCHEMA_FILE);
fs.writeFileSync(file, parameterJsonSchemaText());
console.log(`wrote ${path.relative(process.cwd(), file)}`);
