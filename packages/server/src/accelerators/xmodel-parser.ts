import { WireFormatError, WireReader, WireType } from './wire-reader.ts';

/**
 * Reads what Model Manager needs of an XIR `.xmodel` (docs/accelerators.md): the DPU
 * subgraphs' `dpu_fingerprint` and `dpu_name`, and the graph's input tensors.
 *
 * An xmodel is one `serial_v2.Graph` protobuf message (Vitis AI's
 * `src/vai_runtime/xir/src/xir/graph/graph.proto`; Netron's `xmodel-proto.js` has the same
 * schema). The fields used here, by number:
 *
 *   Graph     1 graph_name  5 op_node (OPNode, repeated)  10 subg_root (SubGraph)  11 graph_attr (map)
 *   OPNode    1 op_name  2 op_type  3 op_attr (map)  4 args (OpArg, repeated)  5 output_tensor (Tensor)
 *   Tensor    1 tensor_name  2 tensor_dim (uint32, repeated)  5 data_type (enum)  6 tensor_bit_width
 *   SubGraph  1 subgraph_name  3 op_name  5 subg_attr (map<string, AttrValue>)  10 subg_child (SubGraph, repeated)
 *   AttrValue oneof: 5 int32  6 uint32  7 int64  8 uint64  11 string_value (and 4–32 others)
 *   map entry 1 key  2 value
 *
 * A DPU subgraph is one whose `device` attribute is "DPU"; it carries `dpu_fingerprint`
 * (uint64) and `dpu_name`. The graph's inputs are its `data` / `data-fix` ops (no arguments).
 * Nearly all of a real xmodel's bytes are weights and instructions in op and subgraph
 * attributes (`data`, `mc_code`, `reg_id_to_parameter_value`): those fields are skipped as
 * they stream past, so a parse holds one chunk of the input and the small fields it keeps,
 * whatever the file's size.
 */

export interface XmodelSummary {
  format: 'xmodel';
  /** The DPU subgraphs (the top-most ones: a DPU subgraph's own children are its parts). */
  dpu_subgraphs: Array<{ name: string; dpu_fingerprint: string | null; dpu_name: string | null }>;
  inputs: Array<{ name: string; shape: number[]; dtype: string }>;
}

/** Not an XIR graph, or a damaged one. */
export class XmodelError extends Error {
  override readonly name = 'XmodelError';
}

/** Longest text field kept (names, attribute strings); longer ones are not names. */
const MAX_STRING = 64 * 1024;
/** A map entry's value that comes before its key is kept up to this size (else skipped). */
const MAX_EARLY_VALUE = 4096;
const MAX_DEPTH = 64;
const MAX_KEPT = 1024;
const MAX_DIMS = 16;
/** XIR's DataType::Type, as Netron names them. */
const DATA_TYPES = ['int', 'uint', 'xint', 'xuint', 'float', 'bfloat'] as const;
const INPUT_OP_TYPES = new Set(['data', 'data-fix']);
const WANTED_ATTRS = new Set(['device', 'dpu_fingerprint', 'dpu_name']);

/**
 * Parses an xmodel from its bytes (any chunk sizes). Throws XmodelError when the bytes are not
 * a serialized XIR graph: broken wire format, a known field of the wrong type, a truncated
 * file, or no root subgraph (every graph XIR serializes has one).
 */
export async function parseXmodel(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<XmodelSummary> {
  const r = new WireReader(source);
  try {
    const summary: XmodelSummary = { format: 'xmodel', dpu_subgraphs: [], inputs: [] };
    let sawRoot = false;
    while (!(await r.atEnd())) {
      const { field, wireType } = await tag(r);
      if (field === 5) {
        const end = await lengthOf(r, wireType, Infinity, 'op_node');
        const input = await parseOpNode(r, end);
        if (input && summary.inputs.length < MAX_KEPT) summary.inputs.push(input);
      } else if (field === 10) {
        const end = await lengthOf(r, wireType, Infinity, 'subg_root');
        await parseSubGraph(r, end, 0, false, summary);
        sawRoot = true;
      } else if (field === 1) {
        await string(r, wireType, Infinity, 'graph_name');
      } else {
        await r.skipValue(wireType, Infinity);
      }
    }
    if (!sawRoot) throw new XmodelError('not an XIR graph: it has no root subgraph (serial_v2.Graph field 10)');
    return summary;
  } catch (err) {
    if (err instanceof WireFormatError) throw new XmodelError(`not an XIR graph: ${err.message}`);
    throw err;
  }
}

async function tag(r: WireReader): Promise<{ field: number; wireType: number }> {
  const at = r.position;
  const value = await r.varint();
  const field = Math.floor(value / 8);
  if (field === 0) throw new WireFormatError('a field number 0', at);
  return { field, wireType: value & 7 };
}

/** The end offset of a length-delimited field that must fit in its parent. */
async function lengthOf(r: WireReader, wireType: number, parentEnd: number, what: string): Promise<number> {
  if (wireType !== WireType.bytes) throw new WireFormatError(`${what} is not length-delimited (wire type ${wireType})`, r.position);
  const length = await r.varint();
  const end = r.position + length;
  if (end > parentEnd) throw new WireFormatError(`${what} runs past the end of its message`, r.position);
  return end;
}

async function string(r: WireReader, wireType: number, parentEnd: number, what: string): Promise<string> {
  const end = await lengthOf(r, wireType, parentEnd, what);
  const length = end - r.position;
  if (length > MAX_STRING) throw new WireFormatError(`${what} is ${length} bytes long: not a name`, r.position);
  return (await r.bytes(length)).toString('utf8');
}

function done(r: WireReader, end: number, what: string): boolean {
  if (r.position === end) return true;
  if (r.position > end) throw new WireFormatError(`a field runs past the end of ${what}`, r.position);
  return false;
}

/** An OPNode: kept (as an input) when it is a `data`/`data-fix` op without arguments. */
async function parseOpNode(r: WireReader, end: number): Promise<XmodelSummary['inputs'][number] | undefined> {
  let name = '';
  let type = '';
  let args = 0;
  let tensor: { shape: number[]; dtype: string } | undefined;
  while (!done(r, end, 'an op')) {
    const { field, wireType } = await tag(r);
    if (field === 1) name = await string(r, wireType, end, 'op_name');
    else if (field === 2) type = await string(r, wireType, end, 'op_type');
    else if (field === 4) {
      await lengthOf(r, wireType, end, 'args').then((argEnd) => r.skip(argEnd - r.position));
      args++;
    } else if (field === 5) tensor = await parseTensor(r, await lengthOf(r, wireType, end, 'output_tensor'));
    else await r.skipValue(wireType, end);
  }
  if (args > 0 || !INPUT_OP_TYPES.has(type)) return undefined;
  return { name, shape: tensor?.shape ?? [], dtype: tensor?.dtype ?? 'unknown' };
}

async function parseTensor(r: WireReader, end: number): Promise<{ shape: number[]; dtype: string }> {
  const shape: number[] = [];
  let dataType = -1;
  let bitWidth = 0;
  while (!done(r, end, 'a tensor')) {
    const { field, wireType } = await tag(r);
    if (field === 2 && wireType === WireType.varint) {
      shape.push(await r.varint());
    } else if (field === 2) {
      // Packed (proto3's default for repeated scalars).
      const packedEnd = await lengthOf(r, wireType, end, 'tensor_dim');
      while (r.position < packedEnd) shape.push(await r.varint());
      if (r.position !== packedEnd) throw new WireFormatError('tensor_dim runs past its length', r.position);
    } else if (field === 5 && wireType === WireType.varint) dataType = await r.varint();
    else if (field === 6 && wireType === WireType.varint) bitWidth = await r.varint();
    else if (field === 5 || field === 6) throw new WireFormatError(`a tensor's field ${field} is not a varint`, r.position);
    else await r.skipValue(wireType, end);
    if (shape.length > MAX_DIMS) throw new WireFormatError('a tensor with more than 16 dimensions', r.position);
  }
  const base = DATA_TYPES[dataType];
  return { shape, dtype: base ? `${base}${bitWidth || ''}` : 'unknown' };
}

/** A SubGraph and its children; DPU subgraphs go into the summary (not those inside one). */
async function parseSubGraph(r: WireReader, end: number, depth: number, insideDpu: boolean, summary: XmodelSummary): Promise<void> {
  if (depth > MAX_DEPTH) throw new WireFormatError(`subgraphs nested deeper than ${MAX_DEPTH}`, r.position);
  let name = '';
  const attrs = new Map<string, string | bigint>();
  /** Children come after the attributes in XIR's files; any that come before are parsed (and kept) as if this were not a DPU subgraph. */
  let isDpu = false;
  while (!done(r, end, 'a subgraph')) {
    const { field, wireType } = await tag(r);
    if (field === 1) name = await string(r, wireType, end, 'subgraph_name');
    else if (field === 5) {
      const entry = await parseAttrEntry(r, await lengthOf(r, wireType, end, 'subg_attr'));
      if (entry) attrs.set(entry.key, entry.value);
      isDpu = attrs.get('device') === 'DPU';
    } else if (field === 10) {
      await parseSubGraph(r, await lengthOf(r, wireType, end, 'subg_child'), depth + 1, insideDpu || isDpu, summary);
    } else await r.skipValue(wireType, end);
  }
  if (isDpu && !insideDpu && summary.dpu_subgraphs.length < MAX_KEPT) {
    const fingerprint = attrs.get('dpu_fingerprint');
    const dpuName = attrs.get('dpu_name');
    summary.dpu_subgraphs.push({ name, dpu_fingerprint: fingerprintOf(fingerprint), dpu_name: typeof dpuName === 'string' ? dpuName : null });
  }
}

/** `0x` + lowercase hex, as xdputil prints fingerprints; null for none (or 0). */
function fingerprintOf(value: string | bigint | undefined): string | null {
  let n: bigint | undefined;
  if (typeof value === 'bigint') n = value;
  else if (typeof value === 'string' && /^\s*(0x[0-9a-f]{1,16}|\d{1,20})\s*$/i.test(value)) n = BigInt(value.trim());
  if (n === undefined || n <= 0n || n >= 1n << 64n) return null;
  return `0x${n.toString(16)}`;
}

/**
 * One `map<string, AttrValue>` entry: the key, and the value when the key is one this parser
 * wants (device, dpu_fingerprint, dpu_name); other values are skipped unread.
 */
async function parseAttrEntry(r: WireReader, end: number): Promise<{ key: string; value: string | bigint } | undefined> {
  let key: string | undefined;
  let value: string | bigint | undefined;
  let early: Buffer | undefined;
  while (!done(r, end, 'an attribute')) {
    const { field, wireType } = await tag(r);
    if (field === 1) key = await string(r, wireType, end, 'an attribute name');
    else if (field === 2) {
      const valueEnd = await lengthOf(r, wireType, end, 'an attribute value');
      if (key !== undefined && WANTED_ATTRS.has(key)) value = await parseAttrValue(r, valueEnd);
      else if (key === undefined && valueEnd - r.position <= MAX_EARLY_VALUE) early = await r.bytes(valueEnd - r.position);
      else await r.skip(valueEnd - r.position);
    } else await r.skipValue(wireType, end);
  }
  if (key === undefined) return undefined;
  if (value === undefined && early !== undefined && WANTED_ATTRS.has(key)) value = await parseAttrValue(new WireReader([early]), early.length);
  return value === undefined ? undefined : { key, value };
}

/** An AttrValue's scalar or string; undefined for the other kinds. */
async function parseAttrValue(r: WireReader, end: number): Promise<string | bigint | undefined> {
  let value: string | bigint | undefined;
  while (!done(r, end, 'an attribute value')) {
    const { field, wireType } = await tag(r);
    if ((field === 5 || field === 6 || field === 7 || field === 8) && wireType === WireType.varint) value = await r.varint64();
    else if (field === 11) value = await string(r, wireType, end, 'a string attribute');
    else await r.skipValue(wireType, end);
  }
  return value;
}
