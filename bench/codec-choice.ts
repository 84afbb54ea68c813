/**
 * Benchmark (run by hand): which codec the link compresses with (docs/compression.md).
 * Compresses and decompresses each file in independent 512 KiB pieces (one data frame each,
 * as the link does) with what Node 20 has built in, and prints the ratio and the rates per
 * CPU-second of one core:
 *
 *   npx tsx bench/codec-choice.ts [--mb 20] [extra files…]
 *
 * Inputs: an UltraScale+-like bitstream and int8 weights (test/support/field-data.ts),
 * random bytes, the simulator's test-pattern video (H.264 in MP4, rendered here at 640×480),
 * the iCE40 bitstream fixture (yosys + nextpnr-ice40 + icepack), and any files named.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { renderTestPatternMp4, textFrameSource } from '../packages/agent/src/simulate/test-pattern-video.ts';
import { writeBitstreamLike, writeWeightsLike } from '../test/support/field-data.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const bytes = arg('mb', 20) * 1e6;
const extra = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
const PIECE = 512 * 1024;
const { BROTLI_PARAM_QUALITY: Q, BROTLI_PARAM_LGWIN: W, BROTLI_PARAM_SIZE_HINT: H } = zlib.constants;

type Codec = { name: string; compress(b: Buffer): Buffer; decompress(b: Buffer): Buffer };
const deflate = (level: number): Codec => ({ name: `deflate ${level}`, compress: (b) => zlib.deflateRawSync(b, { level }), decompress: (b) => zlib.inflateRawSync(b) });
const gzip = (level: number): Codec => ({ name: `gzip ${level}`, compress: (b) => zlib.gzipSync(b, { level }), decompress: (b) => zlib.gunzipSync(b) });
const brotli = (quality: number): Codec => ({
  name: `brotli ${quality}`,
  compress: (b) => zlib.brotliCompressSync(b, { params: { [Q]: quality, [W]: 19, [H]: b.length } }),
  decompress: (b) => zlib.brotliDecompressSync(b),
});
const codecs = [deflate(1), deflate(3), deflate(6), gzip(1), brotli(0), brotli(1), brotli(2), brotli(4), brotli(5), brotli(6)];

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-codecs-'));
try {
  const inputs: Record<string, string> = {
    'bitstream-like (UltraScale+ frames)': path.join(dir, 'bitstream.bin'),
    'weights-like (int8)': path.join(dir, 'weights.bin'),
    'random (encrypted, or a stand-in for video)': path.join(dir, 'random.bin'),
    'test-pattern video (H.264 MP4, 640×480)': path.join(dir, 'video.mp4'),
    'iCE40 bitstream (counter, HX1K)': path.join(import.meta.dirname, '../test/fixtures/ice40/counter-hx1k.bin'),
  };
  await writeBitstreamLike(inputs['bitstream-like (UltraScale+ frames)']!, bytes);
  await writeWeightsLike(inputs['weights-like (int8)']!, bytes);
  await fs.writeFile(inputs['random (encrypted, or a stand-in for video)']!, randomBytes(bytes));
  const video = await renderTestPatternMp4(textFrameSource('codec choice'), { width: 640, height: 480, frameRate: 15, frames: 150 });
  await fs.writeFile(inputs['test-pattern video (H.264 MP4, 640×480)']!, video);
  for (const f of extra) inputs[path.basename(f)] = f;

  console.log(`Node ${process.version}, ${os.cpus()[0]?.model}; pieces of ${PIECE / 1024} KiB compressed on their own; rates in MB of file per CPU-second\n`);
  console.log('| input | size | codec | ratio | compress MB/s | decompress MB/s |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, file] of Object.entries(inputs)) {
    const data = await fs.readFile(file);
    for (const codec of codecs) {
      let wire = 0;
      let cIn = 0;
      let dIn = 0;
      for (let at = 0; at < data.length; at += PIECE) {
        const piece = data.subarray(at, at + PIECE);
        let t = cpu();
        const packed = codec.compress(piece);
        cIn += cpu() - t;
        t = cpu();
        codec.decompress(packed);
        dIn += cpu() - t;
        wire += packed.length;
      }
      const rate = (s: number) => (s > 0 ? (data.length / 1e6 / s).toFixed(0) : '∞');
      console.log(`| ${name} | ${(data.length / 1e6).toFixed(2)} MB | ${codec.name} | ${(data.length / wire).toFixed(2)} | ${rate(cIn)} | ${rate(dIn)} |`);
    }
  }
} finally {
  await fs.rm(dir, { recursive: true, force: true });
}
