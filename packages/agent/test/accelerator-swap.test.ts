import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { afterAll, describe, expect, it } from 'vitest';
import { OperationError } from '../src/operations/operation-errors.ts';
import { BitstreamSwap, isRunnerParameterFile, type AcceleratorStateSource } from '../src/runner/accelerator-swap.ts';
import { bootSimulatedFpga, readSimulatedFpga, simulatedFpgautilPath } from '../src/simulate/fpgautil/index.ts';

/**
 * mm-runner's bitstream step (docs/runner.md, "The bitstream") against the simulated board's
 * fpgautil: the run's bitstream in, what was there put back, a failed load refused before
 * the run with the accelerator as it was.
 */
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

async function board() {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-swap-'));
  dirs.push(dir);
  const base = await bootSimulatedFpga(dir);
  const state: AcceleratorStateSource = {
    current: async () => {
      const s = await readSimulatedFpga(dir);
      return s?.bitstream ? { kind: 'bitstream', bitstream: s.bitstream, overlay: s.overlay } : undefined;
    },
  };
  const env = { ...process.env, MM_SIM_STATE_DIR: dir, MM_SIM_FPGA_LOAD_MS: '0' };
  const swap = (withState = true, fpgautil = [simulatedFpgautilPath]) => new BitstreamSwap({ fpgautil, env, state: withState ? state : undefined, applies: async () => true });
  const bitstream = async (name: string) => {
    const file = path.join(dir, name);
    await fsp.writeFile(file, `bitstream ${name}`);
    return file;
  };
  return { dir, base, swap, bitstream };
}

describe('the bitstream step around an mm-runner run', () => {
  it("loads the run's bitstream, then puts back the design and overlay that were there", async () => {
    const b = await board();
    const notes: string[] = [];
    const held = await b.swap().load(await b.bitstream('run.bit.bin'), (l) => notes.push(l));
    expect(await readSimulatedFpga(b.dir)).toMatchObject({ bitstream: path.join(b.dir, 'run.bit.bin'), overlay: null, loads: 1 });
    expect(await held.restore((l) => notes.push(l))).toBe(true);
    expect(await readSimulatedFpga(b.dir)).toMatchObject({ bitstream: b.base.bitstream, overlay: b.base.overlay, loads: 2 });
    expect(notes).toEqual([
      'the accelerator holds base-dpu-b4096.bit.bin with its overlay: it is put back after the run',
      "loaded the run's bitstream run.bit.bin with fpgautil",
      'put back base-dpu-b4096.bit.bin with its overlay',
    ]);
  });

  it('fails a load that fpgautil refuses before the run, with the accelerator as it was', async () => {
    const b = await board();
    const notes: string[] = [];
    const loading = b.swap().load(await b.bitstream('fail-load.bit.bin'), (l) => notes.push(l));
    await expect(loading).rejects.toBeInstanceOf(OperationError);
    await expect(loading).rejects.toMatchObject({ code: 'bitstream_load_failed', message: expect.stringContaining('FPGA manager failed to load') });
    expect(await readSimulatedFpga(b.dir)).toMatchObject({ bitstream: b.base.bitstream, overlay: b.base.overlay });
    expect(notes.at(-1)).toBe('put back base-dpu-b4096.bit.bin with its overlay');
  });

  it('says what is missing when fpgautil is not installed', async () => {
    const b = await board();
    await expect(b.swap(true, ['/no/such/fpgautil']).load(await b.bitstream('x.bin'), () => {})).rejects.toMatchObject({
      code: 'bitstream_load_failed',
      message: expect.stringContaining('/no/such/fpgautil is not installed (MM_FPGAUTIL)'),
    });
  });

  it('with nothing known of the accelerator, only removes the overlay after the run', async () => {
    const b = await board();
    const notes: string[] = [];
    const held = await b.swap(false).load(await b.bitstream('run.bin'), (l) => notes.push(l));
    expect(await held.restore((l) => notes.push(l))).toBe(true);
    expect(notes[0]).toBe('what the accelerator holds is not known: after the run only its overlay is removed');
    expect(notes.at(-1)).toBe("removed the run's overlay (nothing known to put back)");
    expect((await readSimulatedFpga(b.dir))?.bitstream).toBe(path.join(b.dir, 'run.bin'));
  });

  it('takes only parameter files of mm-runner', async () => {
    const b = await board();
    const file = (text: string) => {
      const f = path.join(b.dir, `p-${Math.random()}.json`);
      return fsp.writeFile(f, text).then(() => f);
    };
    expect(await isRunnerParameterFile(await file('{"schema":"mm-runner/1","task":"passthrough"}'))).toBe(true);
    for (const text of ['{"duration_s":1}', '{"schema":"mm-runner/2"}', 'not json', '[]']) expect(await isRunnerParameterFile(await file(text))).toBe(false);
    expect(await isRunnerParameterFile(undefined)).toBe(false);
    expect(await isRunnerParameterFile(path.join(b.dir, 'missing.json'))).toBe(false);
  });
});

describe('an agent that died while a run held the FPGA', () => {
  it('puts the accelerator back when it starts again, once', async () => {
    const b = await board();
    const heldFile = path.join(b.dir, 'accelerator-held.json');
    const make = () =>
      new BitstreamSwap({
        fpgautil: [simulatedFpgautilPath],
        env: { ...process.env, MM_SIM_STATE_DIR: b.dir, MM_SIM_FPGA_LOAD_MS: '0' },
        state: { current: async () => ({ kind: 'bitstream', bitstream: b.base.bitstream!, overlay: b.base.overlay }) },
        applies: async () => true,
        heldFile,
      });
    await make().load(await b.bitstream('run.bit.bin'), () => {});
    // The agent dies here: no restore. The next one finds the held file.
    expect(JSON.parse(await fsp.readFile(heldFile, 'utf8'))).toMatchObject({ held: { bitstream: b.base.bitstream, overlay: b.base.overlay } });
    const notes: string[] = [];
    expect(await make().recover((l) => notes.push(l))).toBe(true);
    expect(await readSimulatedFpga(b.dir)).toMatchObject({ bitstream: b.base.bitstream, overlay: b.base.overlay });
    expect(notes.at(-1)).toBe('put back base-dpu-b4096.bit.bin with its overlay');
    await expect(fsp.stat(heldFile)).rejects.toThrow();
    expect(await make().recover(() => {})).toBeUndefined();

    // A run that ends normally leaves no held file behind.
    const held = await make().load(await b.bitstream('run2.bit.bin'), () => {});
    expect(await held.restore(() => {})).toBe(true);
    await expect(fsp.stat(heldFile)).rejects.toThrow();
  });
});

describe('a bitstream with its overlay, as one archive', () => {
  async function archive(dir: string, name: string, entries: Array<{ name: string; data?: string; type?: 'file' | 'symlink' | 'directory'; linkname?: string }>, gzip = false) {
    const pack = tar.pack();
    for (const e of entries) {
      if (e.type === 'symlink') pack.entry({ name: e.name, type: 'symlink', linkname: e.linkname ?? '/etc/passwd' });
      else if (e.type === 'directory') pack.entry({ name: e.name, type: 'directory' });
      else pack.entry({ name: e.name, size: Buffer.byteLength(e.data ?? 'x') }, e.data ?? 'x');
    }
    pack.finalize();
    const file = path.join(dir, name);
    const chunks: Buffer[] = [];
    for await (const c of pack) chunks.push(c as Buffer);
    await fsp.writeFile(file, gzip ? gzipSync(Buffer.concat(chunks)) : Buffer.concat(chunks));
    return file;
  }

  it('loads the bitstream with its overlay (tar or tar.gz), then puts the base back', async () => {
    const b = await board();
    for (const gz of [false, true]) {
      const file = await archive(b.dir, `design-${gz}.tar${gz ? '.gz' : ''}`, [{ name: 'design/', type: 'directory' }, { name: 'design/design.bit.bin', data: 'bits' }, { name: 'design/design.dtbo', data: 'overlay' }, { name: 'design/README', data: 'notes' }], gz);
      const notes: string[] = [];
      const held = await b.swap().load(file, (l) => notes.push(l));
      const during = await readSimulatedFpga(b.dir);
      expect(path.basename(during!.bitstream!)).toBe('bitstream.bin');
      expect(path.basename(during!.overlay!)).toBe('overlay.dtbo');
      expect(notes).toContain(`loaded the run's bitstream ${path.basename(file)} and its overlay with fpgautil`);
      expect(await held.restore(() => {})).toBe(true);
      expect(await readSimulatedFpga(b.dir)).toMatchObject({ bitstream: b.base.bitstream, overlay: b.base.overlay });
    }
  });

  it('refuses archives that are not one bitstream and its overlay, before touching the FPGA', async () => {
    const b = await board();
    const cases: Array<[string, Parameters<typeof archive>[2], string]> = [
      ['link.tar', [{ name: 'x.bit.bin' }, { name: 'evil.dtbo', type: 'symlink' }], 'a symlink'],
      ['up.tar', [{ name: '../x.bit.bin' }], 'files go at its top or in one folder'],
      ['two.tar', [{ name: 'a.bit.bin' }, { name: 'b.bin' }], 'more than one bitstream'],
      ['app.tar', [{ name: 'app/app.bit.bin' }, { name: 'app/shell.json', data: '{}' }], 'is an accelerator app'],
      ['none.tar', [{ name: 'only.dtbo' }], 'holds no bitstream'],
    ];
    for (const [name, entries, why] of cases) {
      await expect(b.swap().load(await archive(b.dir, name, entries), () => {}), name).rejects.toMatchObject({ code: 'bitstream_load_failed', message: expect.stringContaining(why) });
    }
    expect(await readSimulatedFpga(b.dir)).toMatchObject({ bitstream: b.base.bitstream, loads: 0 });
  });
});
