import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Three projects (docs/testing.md):
 *
 * - `unit`: files named `*.unit.test.ts`, opted in one by one. No global setup (no embedded
 *   database seed); pure modules and route handlers through `app.request()`. `pnpm test:unit`.
 * - `e2e`: the real server with a real agent and simulated board (`test/e2e/`), the fault
 *   suite (`test/faults/`) and the dashboard's browser tests (`*.browser.test.ts`).
 * - `integration`: every other test file. A new test file lands here without any change to
 *   this config, with the global setup that seeds the embedded database.
 *
 * `pnpm test` (`vitest run`) runs all three, each file exactly once.
 */

const TESTS = ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'];
const UNIT = ['packages/*/test/**/*.unit.test.ts', 'test/**/*.unit.test.ts'];
const E2E = ['test/e2e/**/*.test.ts', 'test/faults/**/*.test.ts', 'packages/*/test/**/*.browser.test.ts'];

/** Creating an embedded PostgreSQL takes seconds: only the projects that may start a server seed one. */
const GLOBAL_SETUP = ['./test/support/global-setup.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    // Two cores, three files at a time: an end-to-end file spends most of its time waiting on
    // its server, agent and board processes (the whole suite used 25 CPU-minutes in 65 minutes
    // with two), and each file may run an embedded PostgreSQL and real child processes.
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    teardownTimeout: 30_000,
    projects: [
      // Worker threads sharing one module graph per worker start far faster than a fork per
      // file (18-22 s against 32-33 s for the project at load 19): a unit test must leave no
      // global state behind (environment, fake timers, mocks).
      { extends: true, test: { name: 'unit', include: UNIT, pool: 'threads', isolate: false } },
      { extends: true, test: { name: 'integration', include: TESTS, exclude: [...configDefaults.exclude, ...UNIT, ...E2E], globalSetup: GLOBAL_SETUP } },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: E2E,
          exclude: [...configDefaults.exclude, ...UNIT],
          globalSetup: GLOBAL_SETUP,
          // Real processes and a browser on a loaded 2-core machine: a poll waits for what it
          // asserts up to 15 s, not vitest's 1 s (the drive view's poll once ran out in CI's load).
          expect: { poll: { timeout: 15_000 } },
        },
      },
    ],
  },
});
