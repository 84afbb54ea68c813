export * from './client.ts';
export { ApiProblem, type FieldProblem } from './problem.ts';
export { formatLabels, nearestLabel, parseLabelPair, type Labels } from './labels.ts';
export {
  EventStreamParser,
  followEventStream,
  readEventStream,
  type FollowDone,
  type FollowEventStreamOptions,
  type SseEvent,
  type StreamFailure,
} from './event-stream.ts';
export { formatChangePercent, formatMetric, formatNumber, metricLabel, metricTitle, metricUnit, type MetricUnit } from './metric-format.ts';
