import { fileURLToPath } from 'node:url';

/**
 * The simulated board's accelerator tools: executable Node scripts (plain JavaScript,
 * shebang, executable bit) to use as MM_DFX_MGR_CLIENT, MM_XMUTIL and MM_XDPUTIL under
 * `mm-agent --simulate`. They read MM_APPS_DIR (required), MM_SIM_STATE_DIR, MM_SIM_HOST_ROOT,
 * MM_SIM_VAI_VERSION and MM_SIM_APPS_SEED; see sim-dfx-mgrd.mjs.
 *
 * Resolved next to this module: a bundle copies them beside its output (scripts/bundle.mjs).
 */
export const simulatedDfxMgrClientPath = fileURLToPath(new URL('./dfx-mgr-client.mjs', import.meta.url));
export const simulatedXmutilPath = fileURLToPath(new URL('./xmutil.mjs', import.meta.url));
export const simulatedXdputilPath = fileURLToPath(new URL('./xdputil.mjs', import.meta.url));
