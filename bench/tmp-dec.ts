import { CompressionDecider, sampleCompression } from '../packages/protocol/src/index.ts';
import { bitstreamLikeChunk, weightsLikeChunk } from '../test/support/field-data.ts';
for (const data of [bitstreamLikeChunk(7, Math.ceil(20e6 / 372)), weightsLikeChunk(3, 20e6)]) {
  const reader = { readAt: async (into: Buffer, o: number, l: number, p: number) => data.copy(into, o, p, Math.min(data.length, p + l)) };
  for (const link of [10e6, 50e6, 600e6]) {
    const d = new CompressionDecider({ decodeBps: 220e6 }, () => link, () => 100);
    await sampleCompression(reader, 0, data.length, d);
    console.log(link / 1e6, d.next(), JSON.stringify(d.describe()));
  }
}
