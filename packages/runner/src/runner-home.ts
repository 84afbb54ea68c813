import { fileURLToPath } from 'node:url';

/**
 * The folder of mm-runner's Python program (`bin/mm-runner`, `mm_runner/`, `schema/`, and
 * `sim/`, the simulated board's DPU stand-in). After bundling the agent, the folder sits next
 * to its bundle (the bundler's besideFiles plugin copies it and rewrites this URL).
 */
const home = new URL('../mm-runner/', import.meta.url);

export function runnerHome(): string {
  return fileURLToPath(home).replace(/\/$/, '');
}

/** The launcher the agent runs when MM_RUNNER is unset. */
export function runnerLauncher(): string {
  return `${runnerHome()}/bin/mm-runner`;
}

/** What the simulated board puts on PYTHONPATH: stand-ins for the Vitis AI runtime's `xir` and `vart`. */
export function simulatedDpuPath(): string {
  return `${runnerHome()}/sim`;
}
