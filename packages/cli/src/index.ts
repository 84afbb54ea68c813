export { buildProgram, main } from './program.ts';
export { EXIT } from './errors.ts';
