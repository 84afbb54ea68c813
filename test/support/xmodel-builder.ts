/**
 * Builds real `.xmodel` files for tests and benchmarks: XIR graphs (`serial_v2.Graph`) encoded
 * field by field with the numbers of Vitis AI's graph.proto (the same schema Netron's
 * xmodel-proto.js decodes), laid out like the compiler's output: op nodes (inputs, weights as
 * `const-fix` ops whose `data` attribute holds the bytes, the layers), then the root subgraph
 * with its children — a USER subgraph for the inputs, the DPU subgraphs (`device: "DPU"`,
 * `dpu_fingerprint`, `dpu_name`, their instructions in `mc_code` and their weights in
 * `reg_id_to_parameter_value`), and CPU subgraphs.
 *
 * A file is built as a list of buffer pieces whose lengths are known, so a 200 MB model is
 * written from a few MB of memory: big payloads are one shared buffer referenced many times.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

type Pieces = Buffer[];

const size = (pieces: Pieces) => pieces.reduce((n, p) => n + p.length, 0);

function varint(value: number | bigint): Buffer {
  let v = BigInt(value);
  if (v < 0n) v += 1n << 64n; // int64 negatives as their two's complement
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return Buffer.from(out);
}

const key = (field: number, wireType: number) => varint(field * 8 + wireType);
const varintField = (field: number, value: number | bigint): Pieces => [key(field, 0), varint(value)];
const bytesField = (field: number, pieces: Pieces): Pieces => [Buffer.concat([key(field, 2), varint(size(pieces))]), ...pieces];
const stringField = (field: number, text: string): Pieces => bytesField(field, [Buffer.from(text, 'utf8')]);
const packedField = (field: number, values: number[]): Pieces => bytesField(field, [Buffer.concat(values.map((v) => varint(v)))]);

/** AttrValue, one member of its oneof. */
const attr = {
  string: (text: string): Pieces => stringField(11, text),
  uint64: (value: bigint): Pieces => varintField(8, value),
  int32: (value: number): Pieces => varintField(5, value),
  /** bytes_value: a Bytes message { bytes value = 1 }. */
  bytes: (payload: Pieces): Pieces => bytesField(12, bytesField(1, payload)),
  int32Vec: (values: number[]): Pieces => bytesField(14, packedField(1, values)),
  /** map_string_2_bytes_value: MapString2Bytes { map<string, Bytes> value = 1 }. */
  mapOfBytes: (entries: Array<[string, Pieces]>): Pieces => bytesField(27, entries.flatMap(([k, v]) => bytesField(1, [...stringField(1, k), ...bytesField(2, bytesField(1, v))]))),
};

/** A `map<string, AttrValue>` entry as field `field`. */
const mapEntry = (field: number, name: string, value: Pieces): Pieces => bytesField(field, [...stringField(1, name), ...bytesField(2, value)]);

export type XirDataType = 'int' | 'uint' | 'xint' | 'xuint' | 'float';
const DATA_TYPE: Record<XirDataType, number> = { int: 0, uint: 1, xint: 2, xuint: 3, float: 4 };

function tensor(name: string, shape: number[], type: XirDataType, bits: number): Pieces {
  return [...stringField(1, name), ...packedField(2, shape), ...varintField(5, DATA_TYPE[type]), ...varintField(6, bits), ...mapEntry(10, 'location', attr.int32(1))];
}

function opNode(op: { name: string; type: string; args?: Array<[string, string[]]>; attrs?: Array<[string, Pieces]>; out: Pieces }): Pieces {
  return bytesField(5, [
    ...stringField(1, op.name),
    ...stringField(2, op.type),
    ...(op.attrs ?? []).flatMap(([k, v]) => mapEntry(3, k, v)),
    ...(op.args ?? []).flatMap(([argName, ops]) => bytesField(4, [...stringField(1, argName), ...ops.flatMap((o) => stringField(2, o))])),
    ...bytesField(5, op.out),
  ]);
}

function subGraph(sg: { name: string; ops: string[]; attrs: Array<[string, Pieces]>; children?: Pieces[] }): Pieces {
  return [
    ...stringField(1, sg.name),
    ...sg.ops.flatMap((o) => stringField(3, o)),
    ...sg.attrs.flatMap(([k, v]) => mapEntry(5, k, v)),
    ...(sg.children ?? []).flatMap((child) => bytesField(10, child)),
  ];
}

export interface XmodelInput {
  name: string;
  shape: number[];
  type?: XirDataType;
  bits?: number;
}

export interface XmodelDpuSubgraph {
  name: string;
  /** The DPU the subgraph was compiled for (`0x101000016010407`). */
  fingerprint: bigint | string;
  dpuName?: string;
  /** Bytes of instructions (`mc_code`). */
  codeBytes?: number;
  /** Bytes of weights kept in the subgraph (`reg_id_to_parameter_value`), in 1 MiB parameters. */
  parameterBytes?: number;
}

export interface XmodelSpec {
  name?: string;
  inputs?: XmodelInput[];
  dpuSubgraphs?: XmodelDpuSubgraph[];
  /** Names of CPU subgraphs after the DPU ones (a CPU-only model has only these). */
  cpuSubgraphs?: string[];
  /** Bytes of weights in `const-fix` ops (1 MiB each, the last one smaller). */
  weightBytes?: number;
}

const MiB = 1024 * 1024;

/** A deterministic, not-all-zero payload of `n` bytes (shared: the pieces reference it). */
const payloadCache = new Map<number, Buffer>();
function payload(n: number): Buffer {
  let buf = payloadCache.get(n);
  if (!buf) {
    buf = Buffer.alloc(n);
    for (let i = 0; i < n; i++) buf[i] = (i * 2654435761) >>> 24;
    payloadCache.set(n, buf);
  }
  return buf;
}

/** `total` bytes as 1 MiB pieces referencing one shared buffer. */
function chunked(total: number): Pieces[] {
  const out: Pieces[] = [];
  for (let left = total; left > 0; left -= MiB) out.push([payload(Math.min(MiB, left))]);
  return out;
}

/** The pieces of an xmodel (see the module comment). */
export function xmodelPieces(spec: XmodelSpec): Pieces {
  const inputs = spec.inputs ?? [{ name: 'input_0', shape: [1, 224, 224, 3], type: 'xint', bits: 8 }];
  const pieces: Pieces = [...stringField(1, spec.name ?? 'model')];
  for (const input of inputs) {
    pieces.push(...opNode({ name: input.name, type: 'data-fix', attrs: [['shape', attr.int32Vec(input.shape)], ['device', attr.string('USER')]], out: tensor(input.name, input.shape, input.type ?? 'xint', input.bits ?? 8) }));
  }
  const weights = chunked(spec.weightBytes ?? 0);
  weights.forEach((w, i) => {
    pieces.push(...opNode({ name: `weights_${i}`, type: 'const-fix', attrs: [['data', attr.bytes(w)], ['device', attr.string('CPU')]], out: tensor(`weights_${i}`, [size(w)], 'xint', 8) }));
  });
  const layer = 'layer_0';
  pieces.push(...opNode({ name: layer, type: 'conv2d-fix', args: [['input', inputs.map((i) => i.name)], ['weights', weights.length ? ['weights_0'] : []]], out: tensor(layer, [1, 112, 112, 64], 'xint', 8) }));

  const children: Pieces[] = [subGraph({ name: 'subgraph_inputs', ops: inputs.map((i) => i.name), attrs: [['device', attr.string('USER')]] })];
  for (const dpu of spec.dpuSubgraphs ?? []) {
    const fingerprint = typeof dpu.fingerprint === 'bigint' ? dpu.fingerprint : BigInt(dpu.fingerprint);
    const params = chunked(dpu.parameterBytes ?? 0).map((p, i): [string, Pieces] => [`REG_${i}`, p]);
    children.push(
      subGraph({
        name: dpu.name,
        ops: [layer],
        attrs: [
          ['device', attr.string('DPU')],
          ['dpu_fingerprint', attr.uint64(fingerprint)],
          ['dpu_name', attr.string(dpu.dpuName ?? 'DPUCZDX8G_ISA1_B4096')],
          ['mc_code', attr.bytes([payload(dpu.codeBytes ?? 4096)])],
          ['reg_id_to_parameter_value', attr.mapOfBytes(params)],
        ],
        // The DPU compiler's own partition of the subgraph: not DPU subgraphs of their own.
        children: [subGraph({ name: `${dpu.name}_super_layer_0`, ops: [layer], attrs: [['device', attr.string('DPU')]] })],
      }),
    );
  }
  for (const cpu of spec.cpuSubgraphs ?? []) children.push(subGraph({ name: cpu, ops: [layer], attrs: [['device', attr.string('CPU')]] }));
  pieces.push(...bytesField(10, subGraph({ name: 'root', ops: [], attrs: [], children })));
  pieces.push(...mapEntry(11, 'origin', attr.string('vai_q_pytorch')));
  return pieces;
}

/** A small xmodel in memory. */
export function xmodelBytes(spec: XmodelSpec): Buffer {
  return Buffer.concat(xmodelPieces(spec));
}

/** Writes an xmodel to `file` piece by piece (a large one never sits in memory); resolves to its size. */
export async function writeXmodel(file: string, spec: XmodelSpec): Promise<number> {
  const out = createWriteStream(file);
  let written = 0;
  for (const piece of xmodelPieces(spec)) {
    written += piece.length;
    if (!out.write(piece)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return written;
}

/** A damaged model: a real one cut short in the middle of a field. */
export function truncatedXmodel(spec: XmodelSpec): Buffer {
  const whole = xmodelBytes(spec);
  return whole.subarray(0, Math.floor(whole.length * 0.6));
}

/** Fingerprints of real DPUs (B4096 and B3136 of the DPUCZDX8G, Vitis AI 2.5), as xdputil prints them. */
export const FINGERPRINT_B4096 = '0x101000016010407';
export const FINGERPRINT_B3136 = '0x101000016010406';
