export * from './parameter-file.ts';
export { parameterJsonSchema, parameterJsonSchemaText, JSON_SCHEMA_FILE } from './json-schema.ts';
