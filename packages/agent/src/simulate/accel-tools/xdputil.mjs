#!/usr/bin/env node
// @ts-check
/**
 * The simulated board's xdputil (mm-agent --simulate): `xdputil query` prints the JSON the
 * real one prints (Vitis AI 2.5/3.0 on a Kria board) for the DPU of the app the simulated
 * dfx-mgrd has loaded, so the fingerprint changes with the app. With no app loaded, or one
 * that brings no DPU (or whose DPU does not answer), it fails as the real one does when VART
 * finds no DPU: glog lines on stderr and a non-zero status. Other commands are not simulated.
 */
import { activeApp, simFromEnv } from './sim-dfx-mgrd.mjs';

const [command] = process.argv.slice(2);
if (command !== 'query') {
  process.stderr.write(`xdputil: ${command === undefined ? 'a command is required' : `${command}: not simulated`} (only "query" is)\n`);
  process.exit(1);
}
const sim = simFromEnv();
const current = activeApp(sim);
const dpu = current?.app.sim.dpu_answers ? current.app.sim.dpu : null;
if (!current || !dpu) {
  process.stderr.write(
    'WARNING: Logging before InitGoogleLogging() is written to STDERR\n' +
      `F0101 00:00:00.000000 ${process.pid} dpu_controller.cpp:44] Check failed: !the_factory_methods.empty() cannot find a DPU${current ? ` (the loaded app ${current.app.name} has none)` : ' (no app is loaded)'}\n` +
      '*** Check failure stack trace: ***\n',
  );
  process.exit(134);
}
const version = sim.vaiVersion;
const cores = Math.max(1, Number(dpu.cores) || 1);
const frequency = Number(dpu.frequency_mhz) || 300;
const kernels = Array.from({ length: cores }, (_, i) => ({
  'DPU Arch': dpu.arch,
  'DPU Frequency (MHz)': frequency,
  'IP Type': 'DPU',
  'Load Parallel': 2,
  'Load augmentation': 'enable',
  'Load minus mean': 'disable',
  'Save Parallel': 2,
  'XRT Frequency (MHz)': frequency,
  cu_addr: `0x${(0xa0010000 + i * 0x10000).toString(16)}`,
  cu_handle: `0xaaaadc9009${(i * 16).toString(16).padStart(2, '0')}`,
  cu_idx: i,
  cu_mask: 1 << i,
  cu_name: `DPUCZDX8G:DPUCZDX8G_${i + 1}`,
  device_id: 0,
  fingerprint: dpu.fingerprint,
  name: `DPU Core ${i}`,
}));
const doc = {
  'DPU IP Spec': { 'DPU Core Count': cores, 'IP version': 'v4.0.0', 'generation timestamp': '2022-05-14 14-30-00', 'git commit id': '4772d51', 'git commit time': 2022051323, regmap: '1to1 version' },
  'VAI Version': {
    'libvart-runner.so': `Xilinx vart-runner Version: ${version}-simulated  2022-07-20-17:13:58 `,
    'libvitis_ai_library-dpu_task.so': `Xilinx vitis_ai_library dpu_task Version: ${version}-simulated  2022-07-15 16:21:46 [UTC] `,
    'libxir.so': 'Xilinx xir Version: xir-simulated 2022-07-20-17:06:45',
    target_factory: `target-factory.${version} simulated`,
  },
  kernels,
};
// The real tool indents with 4 spaces and puts no space after the colon.
process.stdout.write(`${JSON.stringify(doc, null, 4).replace(/": /g, '":')}\n`);
