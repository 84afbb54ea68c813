import type { AcceleratorTools } from '../accelerator/accelerator-tools.ts';
import type { AcceleratorStateSource } from './accelerator-swap.ts';

/**
 * What the FPGA holds before an mm-runner run loads its bitstream: an accelerated app active
 * through dfx-mgr (docs/accelerators.md) is taken off by unloading it and put back by loading
 * it again, through the same tools as `app_load`; otherwise the board's own source (a raw
 * bitstream fpgautil loaded) answers.
 */
export function appStateSource(apps: AcceleratorTools | undefined, fallback: AcceleratorStateSource | undefined): AcceleratorStateSource | undefined {
  if (!apps) return fallback;
  return {
    current: async () => {
      // A board whose tools cannot list (no dfx-mgr) holds no app: its own source answers.
      const listed = await apps.list().catch(() => undefined);
      const active = listed?.listing.apps.find((a) => a.active);
      if (!active) return fallback?.current();
      return {
        kind: 'other',
        description: `the accelerated app ${active.name}`,
        takeOff: async (note) => {
          await apps.unload(note);
        },
        putBack: async (note) => {
          await apps.load(active.name, note);
        },
      };
    },
  };
}
