import { describe, expect, it } from 'vitest';
import { ListingUnrecognised, parseAppListing, parseLoadOutput, parseUnloadOutput } from '../src/accelerator/dfx-mgr-output.ts';
import { parseVartConf } from '../src/accelerator/vart-conf.ts';
import { DpuQueryUnrecognised, normaliseFingerprint, parseXdputilQuery } from '../src/accelerator/xdputil-output.ts';

/**
 * The tools' outputs as the real tools print them: dfx-mgr 2022.x–2023.x (Kria Ubuntu 22.04:
 * daemon_helper.c listAccelerators, `%32s%20s%32s%20s%20s%20s`), dfx-mgr 2024 and later (the
 * `ID accelType Base slotLoc Accelerator` view), and `xdputil query` of Vitis AI 2.5 / 3.0.
 */
const row = (...cells: string[]) => `${cells[0]!.padStart(32)}${cells[1]!.padStart(20)}${cells[2]!.padStart(32)}${cells[3]!.padStart(20)}${cells[4]!.padStart(20)}${cells[5]!.padStart(20)}\n`;
const TABLE_2022 =
  `${row('Accelerator', 'Accel_type', 'Base', 'Base_type', '#slots(PL+AIE)', 'Active_slot')}\n` +
  row('k26-starter-kits', 'XRT_FLAT', 'k26-starter-kits', 'XRT_FLAT', '(0+0)', '0,') +
  row('kv260-smartcam', 'XRT_FLAT', 'kv260-smartcam', 'XRT_FLAT', '(0+0)', '-1') +
  row('AES128', 'SIHA_PL_DFX', 'kr260-dfx-design', 'PL_DFX', '(2+0)', '1,') +
  row('a-rather-long-application-name-beyond-32', 'XRT_FLAT', 'a-rather-long-application-name-beyond-32', 'XRT_FLAT', '(0+0)', '-1');

const IDS_2024 = `
boot.pdi PL UUID: N/A

ID accelType   Base        slotLoc Accelerator
-- ----------- ----------- ------- -----------
 1 XRT_FLAT    k26-starte... 0       k26-starter-kits
 2 XRT_FLAT    kv260-dp    -1      kv260-dp
`;

const XDPUTIL_25 = `WARNING: Logging before InitGoogleLogging() is written to STDERR
I0101 00:00:00.000000  1234 xrt_device_handle_imp.cpp:102] probing
{
    "DPU IP Spec":{
        "DPU Core Count":2,
        "IP version":"v4.0.0",
        "generation timestamp":"2022-05-14 14-30-00",
        "git commit id":"9bf4ccf",
        "git commit time":2022051113,
        "regmap":"1to1 version"
    },
    "VAI Version":{
        "libvart-runner.so":"Xilinx vart-runner Version: 2.5.0-  2022-07-20-17:13:58 ",
        "libvitis_ai_library-dpu_task.so":"Xilinx vitis_ai_library dpu_task Version: 2.5.0-  2022-07-15 16:21:46 [UTC] ",
        "libxir.so":"Xilinx xir Version: xir- 2022-07-20-17:06:45",
        "target_factory":"target-factory.2.5.0 d02dcb6041663dbc7ecbc0c6af9fafa087a789de"
    },
    "kernels":[
        {
            "DPU Arch":"DPUCZDX8G_ISA1_B3136",
            "DPU Frequency (MHz)":300,
            "IP Type":"DPU",
            "cu_idx":0,
            "fingerprint":"0x101000016010406",
            "name":"DPU Core 0"
        },
        {
            "DPU Arch":"",
            "IP Type":"SFM",
            "cu_idx":1,
            "name":"SFM Core"
        },
        {
            "DPU Arch":"DPUCZDX8G_ISA1_B3136",
            "DPU Frequency (MHz)":300,
            "IP Type":"DPU",
            "cu_idx":2,
            "fingerprint":"0x101000016010406",
            "name":"DPU Core 1"
        }
    ]
}
`;

describe('dfx-mgr-client and xmutil output', () => {
  it('reads the 2022.x listing table (right-aligned columns, "0," for an active slot)', () => {
    const { style, apps } = parseAppListing(TABLE_2022);
    expect(style).toBe('table');
    expect(apps).toEqual([
      { name: 'k26-starter-kits', type: 'XRT_FLAT', base: 'k26-starter-kits', active: true, slot: 0 },
      { name: 'kv260-smartcam', type: 'XRT_FLAT', base: 'kv260-smartcam', active: false },
      { name: 'AES128', type: 'SIHA_PL_DFX', base: 'kr260-dfx-design', active: true, slot: 1 },
      { name: 'a-rather-long-application-name-beyond-32', type: 'XRT_FLAT', base: 'a-rather-long-application-name-beyond-32', active: false },
    ]);
  });

  it('reads an empty listing and the 2024 "ID accelType Base slotLoc Accelerator" view', () => {
    expect(parseAppListing(`${row('Accelerator', 'Accel_type', 'Base', 'Base_type', '#slots(PL+AIE)', 'Active_slot')}\n`).apps).toEqual([]);
    const { style, apps } = parseAppListing(IDS_2024);
    expect(style).toBe('ids');
    expect(apps).toEqual([
      { name: 'k26-starter-kits', type: 'XRT_FLAT', active: true, slot: 0 },
      { name: 'kv260-dp', type: 'XRT_FLAT', base: 'kv260-dp', active: false },
    ]);
  });

  it('refuses what is no listing (a daemon that is not running prints an error)', () => {
    expect(() => parseAppListing('No message or read error: Connection refused\n')).toThrow(ListingUnrecognised);
    expect(() => parseAppListing('')).toThrow(/printed nothing/);
  });

  it('reads load outputs of every generation; exit statuses play no part', () => {
    expect(parseLoadOutput('kv260-smartcam: loaded to slot 0\n')).toEqual({ kind: 'loaded', slot: 0 });
    expect(parseLoadOutput('Accelerator loaded to slot 0\n')).toEqual({ kind: 'loaded', slot: 0 });
    expect(parseLoadOutput('Accelerator loaded to slot -1\n')).toEqual({ kind: 'failed' });
    expect(parseLoadOutput('kv260-smartcam: load Error: -1\n')).toEqual({ kind: 'failed' });
    expect(parseLoadOutput('Remove previously loaded accelerator, no empty slot\nkv260-dp: load Error: -1\n')).toEqual({ kind: 'no_empty_slot' });
    expect(parseLoadOutput('Load Error: No empty slot for ID 2\n')).toEqual({ kind: 'no_empty_slot' });
    expect(parseLoadOutput('Load Error: No package found for foo\n')).toEqual({ kind: 'not_found' });
    expect(parseLoadOutput('ID 2: Loaded with slot_handle 0 (FPGA state: operating)\n')).toEqual({ kind: 'loaded', slot: 0 });
    expect(parseLoadOutput('')).toEqual({ kind: 'unknown' });
  });

  it('reads unload outputs', () => {
    expect(parseUnloadOutput('remove from slot 0 returns: 0 (Ok)\n')).toBe('ok');
    expect(parseUnloadOutput('remove from slot 0 returns: -1 (Error)\n')).toBe('failed');
    expect(parseUnloadOutput('Accelerator successfully removed.\n')).toBe('ok');
    expect(parseUnloadOutput('Error trying to remove accelerator.\n')).toBe('failed');
    expect(parseUnloadOutput('unload ID 1 returns: 0 (Ok)\n')).toBe('ok');
    expect(parseUnloadOutput('')).toBe('unknown');
  });
});

describe('xdputil query and vart.conf', () => {
  it('reads the DPU (its first DPU kernel; cores counted, other IP left out) and the Vitis AI version', () => {
    expect(parseXdputilQuery(XDPUTIL_25)).toEqual({ dpu: { arch: 'DPUCZDX8G_ISA1_B3136', fingerprint: '0x101000016010406', frequency_mhz: 300, cores: 2 }, vaiVersion: '2.5.0' });
  });

  it('a query without DPU kernels has no DPU; no JSON at all is unrecognised', () => {
    expect(parseXdputilQuery('{"DPU IP Spec":{},"VAI Version":{"libvart-runner.so":"Xilinx vart-runner Version: 3.0.0-2efa5fe"},"kernels":[]}')).toEqual({ dpu: undefined, vaiVersion: '3.0.0' });
    expect(() => parseXdputilQuery('F0101 00:00:00 dpu_controller.cpp:44] Check failed: !the_factory_methods.empty()\n')).toThrow(DpuQueryUnrecognised);
  });

  it('normalises fingerprints as the tools print them (0x, lowercase, no leading zeros)', () => {
    expect(normaliseFingerprint('0x0101000016010407')).toBe('0x101000016010407');
    expect(normaliseFingerprint('0X101000056010407')).toBe('0x101000056010407');
    expect(normaliseFingerprint(Number(BigInt('0x101000016010407')))).toBeUndefined(); // not a safe integer: never trusted as one
    expect(normaliseFingerprint(BigInt('0x101000016010407').toString())).toBe('0x101000016010407');
    expect(normaliseFingerprint('0x0')).toBeUndefined();
    expect(normaliseFingerprint('nope')).toBeUndefined();
  });

  it('reads the firmware line of /etc/vart.conf', () => {
    expect(parseVartConf('firmware: /lib/firmware/xilinx/kv260-smartcam/kv260-smartcam.xclbin\n')).toBe('/lib/firmware/xilinx/kv260-smartcam/kv260-smartcam.xclbin');
    expect(parseVartConf('# nothing\n')).toBeUndefined();
  });
});
