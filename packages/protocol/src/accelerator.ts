import { z } from 'zod';

/**
 * What a board's accelerator is (docs/accelerators.md): its DPU as `xdputil query` reports
 * it, the accelerated applications `dfx-mgr-client -listPackage` (or `xmutil listapps`)
 * lists, and the xclbin `/etc/vart.conf` points at. Sent by the agent beside its facts
 * (`hello.accelerator`, `board.facts.accelerator`); the server keeps it as
 * `facts.accelerator` and derives the `mm/dpu-*`, `mm/app`, `mm/vai-version` labels.
 */

/** A DPU fingerprint as the tools print it: `0x` and lowercase hex without leading zeros (`0x101000016010407`). */
export const DpuFingerprint = z.string().regex(/^0x[0-9a-f]{1,16}$/, 'must be 0x and up to 16 lowercase hex digits');

/** One accelerated application (a firmware folder dfx-mgrd knows). */
export const AppRecord = z.object({
  name: z.string().min(1).max(200),
  /** `Accel_type` (`XRT_FLAT`, `PL_FLAT`, `XRT_PL_DFX`, ...). */
  type: z.string().max(200),
  /** The base (shell) design it belongs to, when the listing names one. */
  base: z.string().max(200).optional(),
  /** It holds a slot now. */
  active: z.boolean(),
  /** The slot it holds, when active. */
  slot: z.number().int().nonnegative().optional(),
  /** The DPU fingerprint the board reported while this app was last active (the agent remembers it). */
  dpu_fingerprint: DpuFingerprint.optional(),
});
export type AppRecord = z.infer<typeof AppRecord>;

/** The board's DPU, from `xdputil query`. */
export const DpuFacts = z.object({
  /** `DPU Arch` of the first DPU kernel (`DPUCZDX8G_ISA1_B4096`). */
  arch: z.string().max(200),
  fingerprint: DpuFingerprint,
  frequency_mhz: z.number().finite().nonnegative().optional(),
  /** How many DPU cores (kernels) it reports. */
  cores: z.number().int().nonnegative(),
});
export type DpuFacts = z.infer<typeof DpuFacts>;

export const AcceleratorFacts = z.object({
  dpu: DpuFacts.optional(),
  /** The Vitis AI runtime's version (`2.5.0`), from the same query. */
  vai_version: z.string().max(200).optional(),
  /** The `firmware:` line of /etc/vart.conf: the xclbin VART opens. */
  vart_target: z.string().max(1000).optional(),
  apps: z.array(AppRecord).max(256),
});
export type AcceleratorFacts = z.infer<typeof AcceleratorFacts>;

/** The apps and the active one's name, as the app RPCs answer (with the facts they leave). */
export const AppList = z.object({ apps: z.array(AppRecord), active: z.string().nullable(), accelerator: AcceleratorFacts });
export type AppList = z.infer<typeof AppList>;
