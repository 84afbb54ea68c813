import { describe, expect, it } from 'vitest';
import { HELP_TEXT } from '../src/cli.ts';
import { agentEnvSchema } from '../src/config.ts';

describe('mm-agent --help (issue 39, item 11)', () => {
  it('lists every setting the agent reads', () => {
    const missing = Object.keys(agentEnvSchema.shape).filter((name) => !new RegExp(`^ {2}${name} `, 'm').test(HELP_TEXT));
    expect(missing).toEqual([]);
  });
});
