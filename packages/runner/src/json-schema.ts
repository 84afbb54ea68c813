import { z } from 'zod';
import { PARAMETER_SCHEMA_ID, ParameterFile } from './parameter-file.ts';

/** Where the generated JSON Schema lives, relative to the package: the Python runner reads it. */
export const JSON_SCHEMA_FILE = 'mm-runner/schema/mm-runner-1.schema.json';

/**
 * The parameter file's JSON Schema (2020-12), generated from the zod schema: types, bounds,
 * enums and defaults. The few rules across fields (`command` with task `command`, `detection`
 * with task `detection`, anchors in pairs, one anchor set per stride) are not expressible
 * here; the Python runner checks them itself (mm_runner/params.py).
 */
export function parameterJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(ParameterFile, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    $schema: generated.$schema,
    $id: `https://model-manager.invalid/schemas/${PARAMETER_SCHEMA_ID}`,
    title: `${PARAMETER_SCHEMA_ID}: the parameter file of mm-runner (docs/runner.md)`,
    ...Object.fromEntries(Object.entries(generated).filter(([k]) => k !== '$schema')),
  };
}

/** The file's text, as the generator writes it. */
export function parameterJsonSchemaText(): string {
  return `${JSON.stringify(parameterJsonSchema(), null, 2)}\n`;
}
