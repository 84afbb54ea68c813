import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseXmodel, XmodelError } from '../src/accelerators/xmodel-parser.ts';
import { FINGERPRINT_B3136, FINGERPRINT_B4096, truncatedXmodel, xmodelBytes } from '../../../test/support/xmodel-builder.ts';

/**
 * The server's xmodel reader against models built with the XIR schema: encoded by protobuf.js
 * from test/fixtures/xir/graph.proto (an encoder that shares nothing with the reader), and
 * written by test/support/xmodel-builder.ts (which the same schema decodes back).
 */
const protoFile = fileURLToPath(new URL('../../../test/fixtures/xir/graph.proto', import.meta.url));

let Graph: protobuf.Type;
beforeAll(async () => {
  Graph = (await protobuf.load(protoFile)).lookupType('serial_v2.Graph');
});

const str = (s: string) => ({ stringValue: s });
/** A uint64 as protobuf.js takes it from an object: its decimal text. */
const u64 = (hex: string) => ({ uint64Value: BigInt(hex).toString() });

/** A model as the Vitis AI compiler lays it out, encoded by protobuf.js from the schema. */
function encodedBySchema(opts: { dpus: Array<{ name: string; fp: string; dpuName: string }>; valueFirst?: boolean }): Uint8Array {
  const dpuChildren = opts.dpus.map((d) => ({
    subgraphName: d.name,
    opName: ['conv1'],
    subgAttr: {
      device: str('DPU'),
      dpu_fingerprint: u64(d.fp),
      dpu_name: str(d.dpuName),
      mc_code: { bytesValue: { value: Buffer.alloc(5000, 1) } },
      reg_id_to_parameter_value: { mapString_2BytesValue: { value: { REG_0: { value: Buffer.alloc(70_000, 2) } } } },
    },
    subgChild: [{ subgraphName: `${d.name}_inner`, subgAttr: { device: str('DPU') } }],
  }));
  const message = Graph.fromObject({
    graphName: 'yolov3',
    opNode: [
      { opName: 'image', opType: 'data-fix', opAttr: { device: str('USER') }, outputTensor: { tensorName: 'image', tensorDim: [1, 416, 416, 3], dataType: 2, tensorBitWidth: 8 } },
      { opName: 'scale', opType: 'data', outputTensor: { tensorName: 'scale', tensorDim: [1], dataType: 4, tensorBitWidth: 32 } },
      { opName: 'w0', opType: 'const-fix', opAttr: { data: { bytesValue: { value: Buffer.alloc(100_000, 3) } } }, outputTensor: { tensorName: 'w0', tensorDim: [100000], dataType: 2, tensorBitWidth: 8 } },
      { opName: 'conv1', opType: 'conv2d-fix', args: [{ argName: 'input', argOps: ['image'] }, { argName: 'weights', argOps: ['w0'] }], outputTensor: { tensorName: 'conv1', tensorDim: [1, 208, 208, 32], dataType: 2, tensorBitWidth: 8 } },
    ],
    subgRoot: { subgraphName: 'root', subgChild: [{ subgraphName: 'subgraph_image', subgAttr: { device: str('USER') } }, ...dpuChildren, { subgraphName: 'subgraph_post', subgAttr: { device: str('CPU') } }] },
    graphAttr: { origin: str('vai_q_pytorch') },
  });
  return Graph.encode(message).finish();
}

describe('xmodel reader', () => {
  it('reads a model protobuf.js encoded from the XIR schema: DPU subgraphs (not their inner parts) and inputs', async () => {
    const bytes = encodedBySchema({ dpus: [{ name: 'subgraph_conv1', fp: FINGERPRINT_B4096, dpuName: 'DPUCZDX8G_ISA1_B4096' }] });
    expect(await parseXmodel([bytes])).toEqual({
      format: 'xmodel',
      dpu_subgraphs: [{ name: 'subgraph_conv1', dpu_fingerprint: FINGERPRINT_B4096, dpu_name: 'DPUCZDX8G_ISA1_B4096' }],
      inputs: [
        { name: 'image', shape: [1, 416, 416, 3], dtype: 'xint8' },
        { name: 'scale', shape: [1], dtype: 'float32' },
      ],
    });
  });

  it('reads several DPU subgraphs of different fingerprints, in any chunking (down to single bytes)', async () => {
    const bytes = Buffer.from(
      encodedBySchema({
        dpus: [
          { name: 'subgraph_backbone', fp: FINGERPRINT_B4096, dpuName: 'DPUCZDX8G_ISA1_B4096' },
          { name: 'subgraph_head', fp: FINGERPRINT_B3136, dpuName: 'DPUCZDX8G_ISA1_B3136' },
        ],
      }),
    );
    const expected = [
      { name: 'subgraph_backbone', dpu_fingerprint: FINGERPRINT_B4096, dpu_name: 'DPUCZDX8G_ISA1_B4096' },
      { name: 'subgraph_head', dpu_fingerprint: FINGERPRINT_B3136, dpu_name: 'DPUCZDX8G_ISA1_B3136' },
    ];
    for (const size of [1, 7, 4096, bytes.length]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      expect((await parseXmodel(chunks)).dpu_subgraphs).toEqual(expected);
    }
  });

  it('a CPU-only model has no DPU subgraph', async () => {
    const summary = await parseXmodel([encodedBySchema({ dpus: [] })]);
    expect(summary.dpu_subgraphs).toEqual([]);
    expect(summary.inputs.map((i) => i.name)).toEqual(['image', 'scale']);
  });

  it("the test builder's files are XIR graphs: the schema decodes them as the reader reads them", async () => {
    const bytes = xmodelBytes({
      name: 'builder',
      inputs: [{ name: 'in0', shape: [1, 224, 224, 3] }],
      dpuSubgraphs: [{ name: 'subgraph_a', fingerprint: FINGERPRINT_B3136, dpuName: 'DPUCZDX8G_ISA1_B3136', parameterBytes: 1_500_000 }],
      cpuSubgraphs: ['subgraph_softmax'],
      weightBytes: 2_100_000,
    });
    const decoded = Graph.toObject(Graph.decode(bytes), { longs: String, bytes: String }) as {
      graphName: string;
      opNode: Array<{ opType: string }>;
      subgRoot: { subgChild: Array<{ subgraphName: string; subgAttr: Record<string, { stringValue?: string; uint64Value?: string }> }> };
    };
    expect(decoded.graphName).toBe('builder');
    expect(decoded.opNode.map((o) => o.opType)).toEqual(['data-fix', 'const-fix', 'const-fix', 'const-fix', 'conv2d-fix']);
    const dpu = decoded.subgRoot.subgChild.find((c) => c.subgAttr.device?.stringValue === 'DPU')!;
    expect(dpu.subgraphName).toBe('subgraph_a');
    expect(`0x${BigInt(dpu.subgAttr.dpu_fingerprint!.uint64Value!).toString(16)}`).toBe(FINGERPRINT_B3136);
    expect(await parseXmodel([bytes])).toEqual({
      format: 'xmodel',
      dpu_subgraphs: [{ name: 'subgraph_a', dpu_fingerprint: FINGERPRINT_B3136, dpu_name: 'DPUCZDX8G_ISA1_B3136' }],
      inputs: [{ name: 'in0', shape: [1, 224, 224, 3], dtype: 'xint8' }],
    });
  });

  it('reads a map entry whose value comes before its key', async () => {
    // A hand-made subgraph attribute entry: value (field 2) first, then key (field 1).
    const Sub = Graph.lookupType('serial_v2.SubGraph');
    const Value = Graph.lookupType('serial_v2.AttrValue');
    const value = Value.encode(Value.fromObject({ stringValue: 'DPU' })).finish();
    const entry = Buffer.concat([Buffer.from([0x12, value.length]), value, Buffer.from([0x0a, 6]), Buffer.from('device')]);
    const fp = Value.encode(Value.fromObject(u64(FINGERPRINT_B4096))).finish();
    const fpEntry = Buffer.concat([Buffer.from([0x0a, 15]), Buffer.from('dpu_fingerprint'), Buffer.from([0x12, fp.length]), fp]);
    const sub = Buffer.concat([Sub.encode(Sub.fromObject({ subgraphName: 'odd' })).finish(), Buffer.from([0x2a, entry.length]), entry, Buffer.from([0x2a, fpEntry.length]), fpEntry]);
    const graph = Buffer.concat([Buffer.from([0x52, sub.length]), sub]);
    expect((await parseXmodel([graph])).dpu_subgraphs).toEqual([{ name: 'odd', dpu_fingerprint: FINGERPRINT_B4096, dpu_name: null }]);
  });

  it.each<[string, Uint8Array]>([
    ['a truncated model', truncatedXmodel({ dpuSubgraphs: [{ name: 's', fingerprint: FINGERPRINT_B4096 }], weightBytes: 300_000 })],
    ['text', Buffer.from('this is a README, not a model\n')],
    ['an empty file', Buffer.alloc(0)],
    ['random bytes', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256))],
    ['a protobuf of something else (no root subgraph)', Buffer.from([0x0a, 0x03, 0x61, 0x62, 0x63, 0x10, 0x01])],
    ['a field running past its parent', Buffer.from([0x52, 0x05, 0x0a, 0x10, 0x61, 0x62, 0x63])],
  ])('refuses %s', async (_what, bytes) => {
    await expect(parseXmodel([bytes])).rejects.toBeInstanceOf(XmodelError);
  });

  it('names where a damaged model went wrong', async () => {
    await expect(parseXmodel([truncatedXmodel({ dpuSubgraphs: [{ name: 's', fingerprint: FINGERPRINT_B4096 }], weightBytes: 300_000 })])).rejects.toThrow(/unexpected end of the file.*at byte \d+/);
  });
});
