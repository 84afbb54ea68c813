import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * The simulated board's hwmon folders, as a KV260 has them: `hwmon0` an INA260 (the
 * carrier's U14, the board's 12 V input) and `hwmon1` the Zynq UltraScale+ AMS (PS and PL
 * temperatures). mm-runner reads them (MM_HWMON_ROOT); the DPU stand-in rewrites their values
 * as the simulated DPU works (mm-runner/sim/mm_dpu_sim/device.py), which the `mm-simulated`
 * marker allows. Written at idle values on every start.
 */
export async function writeSimulatedHwmon(root: string): Promise<void> {
  const files: Record<string, string> = {
    'mm-simulated': 'the simulated board: mm_dpu_sim drives these values\n',
    'hwmon0/name': 'ina260\n',
    'hwmon0/label': 'U14: the board\'s 12 V input\n',
    'hwmon0/power1_input': '6400000\n',
    'hwmon0/curr1_input': '533\n',
    'hwmon0/in1_input': '12000\n',
    'hwmon1/name': 'ams\n',
    'hwmon1/temp1_label': 'PS Temp\n',
    'hwmon1/temp1_input': '47000\n',
    'hwmon1/temp2_label': 'PL Temp\n',
    'hwmon1/temp2_input': '51000\n',
  };
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(root, rel);
    await fsp.mkdir(path.dirname(file), { recursive: true });
    await fsp.writeFile(file, text);
  }
}
