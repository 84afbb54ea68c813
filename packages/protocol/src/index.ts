export * from './version.ts';
export * from './limits.ts';
export * from './frames.ts';
export * from './messages.ts';
export * from './rpc.ts';
export * from './streams.ts';
export * from './asyncapi.ts';
