import { fileURLToPath } from 'node:url';

/**
 * The simulated board's xlnx-config: an executable Node script (plain JavaScript, shebang,
 * executable bit) to use as MM_XLNX_CONFIG under `mm-agent --simulate`. It reads MM_PAC_DIR
 * (required), MM_SIM_STATE_DIR, MM_SIM_BOARD and MM_SIM_SEED; see the script's header.
 *
 * Resolved next to this module: a bundle must copy xlnx-config.mjs beside its output (or
 * point MM_XLNX_CONFIG at wherever it ships it).
 */
export const simulatedXlnxConfigPath = fileURLToPath(new URL('./xlnx-config.mjs', import.meta.url));
