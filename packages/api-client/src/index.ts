export * from './client.ts';
export { ApiProblem, type FieldProblem } from './problem.ts';
export { formatLabels, parseLabelPair, type Labels } from './labels.ts';
