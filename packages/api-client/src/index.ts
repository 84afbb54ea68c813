export * from './client.ts';
export { ApiProblem, type FieldProblem } from './problem.ts';
