import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
/** The agent's version, as its package.json says; reported in `hello` and `agent.info`. */
export const AGENT_VERSION: string = (require('../package.json') as { version: string }).version;
