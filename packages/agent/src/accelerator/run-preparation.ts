import type { MessageOf } from '@mm/protocol';
import { OperationError } from '../operations/operation-errors.ts';
import type { AcceleratorTools } from './accelerator-tools.ts';
import { AppError } from './app-errors.ts';

type OpStart = MessageOf<'op.start'>;

/** Reports of a run's preparation: log lines and the phase. */
export interface PreparationReport {
  note(line: string): void;
  progress(phase: string): void;
}

/**
 * What an execute does on the board before any of its files move (docs/accelerators.md):
 *
 * 1. `requires_app`: the app is loaded unless it is active already (the same load as the
 *    `app.load` method: unload what holds the slot, load, verify), `result.app_loaded` says
 *    which. A load that fails fails the run with the load's code (`app_not_found`,
 *    `no_empty_slot`, `app_load_failed`, `app_load_timeout`).
 * 2. `model_fingerprints` (the model's DPU subgraphs): the board's DPU, as `xdputil` reports it
 *    now, must have one of them, else the run fails `dpu_fingerprint_mismatch` and nothing is
 *    transferred. Without a fingerprint to compare (no `xdputil`, or no DPU answering) the
 *    run goes ahead and the log says the check was skipped.
 *
 * Answers what goes into the run's result. `changed` runs after an app was loaded.
 */
export async function prepareRun(tools: AcceleratorTools | undefined, msg: OpStart, report: PreparationReport, changed: () => void): Promise<Record<string, unknown>> {
  const result: Record<string, unknown> = {};
  const app = msg.requires_app;
  if (app !== undefined) {
    if (!tools) throw new OperationError('app_tools_unavailable', `The run needs the app ${app}, and this agent has no accelerator tools configured.`);
    report.progress('app');
    report.note(`the run needs the app ${app}`);
    try {
      const answer = await tools.load(app, (text) => report.note(text.trimEnd()));
      result.app = app;
      result.app_loaded = answer.loaded;
      report.note(answer.loaded ? `loaded ${app} in slot ${answer.slot} before the run` : `${app} is active already: not loaded again`);
    } catch (err) {
      if (err instanceof AppError) {
        report.note(`could not load ${app}: ${err.message}`);
        throw new OperationError(err.code, err.message);
      }
      throw err;
    } finally {
      changed();
    }
  }
  const wanted = msg.model_fingerprints ?? [];
  if (wanted.length > 0) {
    const query = tools ? await tools.queryDpu() : ({ available: false } as const);
    if (!query.available) {
      report.note(`DPU fingerprint check skipped: the board's DPU fingerprint is unknown (no xdputil); the model needs ${wanted.join(' or ')}`);
      result.dpu_check = 'skipped';
    } else if (!query.dpu) {
      report.note(`DPU fingerprint check skipped: xdputil reports no DPU on the board, so its fingerprint is unknown; the model needs ${wanted.join(' or ')}`);
      result.dpu_check = 'skipped';
    } else if (wanted.includes(query.dpu.fingerprint)) {
      report.note(`DPU fingerprint check: the board's ${query.dpu.arch} (${query.dpu.fingerprint}) fits the model`);
      result.dpu_check = 'passed';
      result.dpu_fingerprint = query.dpu.fingerprint;
    } else {
      const message = `The model was compiled for DPU fingerprint ${wanted.join(' or ')}; the board's DPU (${query.dpu.arch}) has ${query.dpu.fingerprint}. Nothing was transferred.`;
      report.note(message);
      throw new OperationError('dpu_fingerprint_mismatch', message);
    }
  }
  return result;
}
