"""An XIR `.xmodel` (protobuf, package `serial_v2`, Vitis AI's graph_proto_v2.proto) read and
written by hand. The field numbers that matter:

  Graph      1 graph_name, 5 op_node (OPNode), 10 subg_root (SubGraph), 11 graph_attr (map)
  OPNode     1 op_name, 2 op_type, 3 op_attr (map), 4 args (OpArg), 5 output_tensor (Tensor)
  OpArg      1 arg_name, 2 arg_ops (repeated string)
  Tensor     1 tensor_name, 2 tensor_dim (repeated uint32), 5 data_type, 6 tensor_bit_width,
             10 tensor_attr (map)
  SubGraph   1 subgraph_name, 3 op_name (repeated string), 5 subg_attr (map), 10 subg_child
  AttrValue  oneof: 4 bool, 5 int32, 6 uint32, 7 int64, 8 uint64, 9 float, 10 double,
             11 string, 12 bytes (Bytes{1}), 13–21 vectors ({1: repeated}), 22–32 maps
  map entry  1 key, 2 value

Reading uses memoryview slices of an mmap: an op's weights (hundreds of MB in a real model)
are skipped, never copied. Subgraph input and output tensors follow XIR's rules
(xir/graph/subgraph_imp.cpp): the inputs are the output tensors of ops outside the subgraph
that feed an op inside; the outputs are the tensors of ops inside whose fanout leaves the
subgraph or that have none. Both sorted by tensor name, as get_sorted_*_tensors does."""

import mmap
import struct

from . import protobuf as pb

# xir::DataType::Type
DATA_TYPES = ["int", "uint", "xint", "xuint", "float", "bfloat", "unknown"]


class BytesAttr:
    """A bytes attribute (an op's weights, a DPU's code) known by its size only."""

    def __init__(self, size):
        self.size = size

    def __repr__(self):
        return "BytesAttr(%d)" % self.size


class Tensor:
    def __init__(self, name, dims, data_type=2, bit_width=8, attrs=None):
        self.name = name
        self.dims = list(dims)
        self.data_type = data_type
        self.bit_width = bit_width
        self.attrs = dict(attrs or {})

    @property
    def dtype(self):
        kind = DATA_TYPES[self.data_type] if 0 <= self.data_type < len(DATA_TYPES) else "unknown"
        return "%s%d" % (kind, self.bit_width)

    def __repr__(self):
        return "Tensor(%r, %r, %s)" % (self.name, self.dims, self.dtype)


class Op:
    def __init__(self, name, type, tensor, inputs=None, attrs=None):
        self.name = name
        self.type = type
        self.tensor = tensor
        self.inputs = dict(inputs or {})  # arg name → [op names]
        self.attrs = dict(attrs or {})

    def input_ops(self):
        return [name for names in self.inputs.values() for name in names]


class Subgraph:
    def __init__(self, name, op_names=(), attrs=None, children=None):
        self.name = name
        self.op_names = list(op_names)
        self.attrs = dict(attrs or {})
        self.children = list(children or [])


class Graph:
    def __init__(self, name, ops, root, attrs=None):
        self.name = name
        self.ops = {op.name: op for op in ops}
        self.root = root
        self.attrs = dict(attrs or {})

    def fanout(self, op_name):
        return [op.name for op in self.ops.values() if op_name in op.input_ops()]

    def subgraph_ops(self, sub):
        """A subgraph's ops: its own names, or (a non-leaf without names) its children's."""
        if sub.op_names:
            return set(sub.op_names)
        names = set()
        for child in sub.children:
            names |= self.subgraph_ops(child)
        return names

    def input_tensors(self, sub):
        inside = self.subgraph_ops(sub)
        found = {}
        for name in inside:
            op = self.ops.get(name)
            if op is None:
                continue
            for src in op.input_ops():
                if src not in inside and src in self.ops:
                    t = self.ops[src].tensor
                    found[t.name] = t
        return [found[k] for k in sorted(found)]

    def output_tensors(self, sub):
        inside = self.subgraph_ops(sub)
        fanout = {}
        for op in self.ops.values():
            for src in op.input_ops():
                fanout.setdefault(src, []).append(op.name)
        found = {}
        for name in inside:
            op = self.ops.get(name)
            if op is None:
                continue
            outs = fanout.get(name, [])
            if not outs or any(o not in inside for o in outs):
                found[op.tensor.name] = op.tensor
        return [found[k] for k in sorted(found)]

    def toposort_children(self, sub):
        """The children of `sub` in an order where each comes after those it reads from
        (ties in file order), as toposort_child_subgraph gives them."""
        children = list(sub.children)
        owner = {}
        for i, child in enumerate(children):
            for name in self.subgraph_ops(child):
                owner[name] = i
        deps = []
        for i, child in enumerate(children):
            d = set()
            for name in self.subgraph_ops(child):
                op = self.ops.get(name)
                for src in op.input_ops() if op else []:
                    j = owner.get(src)
                    if j is not None and j != i:
                        d.add(j)
            deps.append(d)
        done, order = set(), []
        while len(order) < len(children):
            ready = [i for i in range(len(children)) if i not in done and deps[i] <= done]
            if not ready:  # a cycle: keep the rest in file order
                ready = [i for i in range(len(children)) if i not in done]
            order.append(ready[0])
            done.add(ready[0])
        return [children[i] for i in order]


# ── reading ─────────────────────────────────────────────────────────────────────────────


def _text(buf, span):
    return bytes(buf[span[0] : span[1]]).decode("utf-8", "replace")


def _packed_or_single(buf, wire, value, signed_bits=None):
    """A repeated scalar field's items: packed (length-delimited) or one per field."""
    if wire == pb.LENGTH:
        out, pos, end = [], value[0], value[1]
        while pos < end:
            v, pos = pb.read_varint(buf, pos, end)
            out.append(pb.to_signed(v, signed_bits) if signed_bits else v)
        return out
    return [pb.to_signed(value, signed_bits) if signed_bits else value]


def _attr_value(buf, span):
    for number, wire, value in pb.fields(buf, span[0], span[1]):
        if number == 4:
            return bool(value)
        if number == 5:
            return pb.to_signed(value & 0xFFFFFFFF, 32)
        if number == 6:
            return value
        if number == 7:
            return pb.to_signed(value, 64)
        if number == 8:
            return value
        if number == 9:
            return struct.unpack("<f", struct.pack("<I", value))[0]
        if number == 10:
            return struct.unpack("<d", struct.pack("<Q", value))[0]
        if number == 11:
            return _text(buf, value)
        if number == 12:
            # Weights live here: only their size is kept, the bytes are never copied.
            for n, _w, v in pb.fields(buf, value[0], value[1]):
                if n == 1:
                    return BytesAttr(v[1] - v[0])
            return BytesAttr(0)
        if number in (14, 15, 16, 17):  # int32, uint32, int64, uint64 vectors
            out = []
            bits = {14: 32, 16: 64}.get(number)
            for n, w, v in pb.fields(buf, value[0], value[1]):
                if n == 1:
                    out.extend(_packed_or_single(buf, w, v, bits))
            return out
        if number == 13:
            out = []
            for n, w, v in pb.fields(buf, value[0], value[1]):
                if n == 1:
                    out.extend(bool(x) for x in _packed_or_single(buf, w, v))
            return out
        if number in (18, 19):
            fmt, size = ("<f", 4) if number == 18 else ("<d", 8)
            out = []
            for n, w, v in pb.fields(buf, value[0], value[1]):
                if n != 1:
                    continue
                if w == pb.LENGTH:
                    out.extend(x[0] for x in struct.iter_unpack(fmt, bytes(buf[v[0] : v[1]])))
                else:
                    out.append(struct.unpack(fmt, struct.pack("<I" if size == 4 else "<Q", v))[0])
            return out
        if number == 20:
            return [_text(buf, v) for n, _w, v in pb.fields(buf, value[0], value[1]) if n == 1]
        if number == 26:  # map<string, string>
            return _string_map(buf, value)
        return None  # other vectors and maps: not needed here
    return None


def _string_map(buf, span):
    out = {}
    for n, _w, entry in pb.fields(buf, span[0], span[1]):
        if n != 1:
            continue
        k = v = ""
        for m, _w2, x in pb.fields(buf, entry[0], entry[1]):
            if m == 1:
                k = _text(buf, x)
            elif m == 2:
                v = _text(buf, x)
        out[k] = v
    return out


def _attr_entry(buf, span):
    key, value = "", None
    for number, _wire, v in pb.fields(buf, span[0], span[1]):
        if number == 1:
            key = _text(buf, v)
        elif number == 2:
            value = _attr_value(buf, v)
    return key, value


def _tensor(buf, span):
    t = Tensor("", [], 0, 0)
    for number, wire, value in pb.fields(buf, span[0], span[1]):
        if number == 1:
            t.name = _text(buf, value)
        elif number == 2:
            t.dims.extend(_packed_or_single(buf, wire, value))
        elif number == 5:
            t.data_type = pb.to_signed(value & 0xFFFFFFFF, 32)
        elif number == 6:
            t.bit_width = pb.to_signed(value & 0xFFFFFFFF, 32)
        elif number == 10:
            k, v = _attr_entry(buf, value)
            t.attrs[k] = v
    return t


def _op(buf, span):
    op = Op("", "", Tensor("", []))
    for number, _wire, value in pb.fields(buf, span[0], span[1]):
        if number == 1:
            op.name = _text(buf, value)
        elif number == 2:
            op.type = _text(buf, value)
        elif number == 3:
            k, v = _attr_entry(buf, value)
            op.attrs[k] = v
        elif number == 4:
            arg, names = "", []
            for n, _w, v in pb.fields(buf, value[0], value[1]):
                if n == 1:
                    arg = _text(buf, v)
                elif n == 2:
                    names.append(_text(buf, v))
            op.inputs.setdefault(arg, []).extend(names)
        elif number == 5:
            op.tensor = _tensor(buf, value)
    if not op.tensor.name:
        op.tensor.name = op.name
    return op


def _subgraph(buf, span, depth=0):
    if depth > 64:
        raise pb.DecodeError("subgraphs nested deeper than 64")
    sub = Subgraph("")
    for number, _wire, value in pb.fields(buf, span[0], span[1]):
        if number == 1:
            sub.name = _text(buf, value)
        elif number == 3:
            sub.op_names.append(_text(buf, value))
        elif number == 5:
            k, v = _attr_entry(buf, value)
            sub.attrs[k] = v
        elif number == 10:
            sub.children.append(_subgraph(buf, value, depth + 1))
    return sub


def parse(buf):
    """A Graph from the bytes (or mmap / memoryview) of an xmodel. Raises DecodeError."""
    name, ops, root, attrs = "", [], None, {}
    for number, wire, value in pb.fields(buf):
        if number == 1 and wire == pb.LENGTH:
            name = _text(buf, value)
        elif number == 5 and wire == pb.LENGTH:
            ops.append(_op(buf, value))
        elif number == 10 and wire == pb.LENGTH:
            root = _subgraph(buf, value)
        elif number == 11 and wire == pb.LENGTH:
            k, v = _attr_entry(buf, value)
            attrs[k] = v
    if root is None:
        raise pb.DecodeError("no root subgraph (field 10): not an XIR graph")
    if not root.op_names and not root.children:
        root.op_names = [op.name for op in ops]
    return Graph(name, ops, root, attrs)


def load(path):
    """The Graph of the xmodel at `path`, read through a memory map (no copy of the file)."""
    with open(path, "rb") as f:
        try:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file cannot be mapped
            raise pb.DecodeError("the file is empty")
        view = memoryview(mm)
        try:
            return parse(view)
        finally:
            # Every parsed value is a copy (text, numbers, BytesAttr sizes): nothing holds the map.
            view.release()
            mm.close()


# ── writing ─────────────────────────────────────────────────────────────────────────────


def _attr_bytes(value):
    if isinstance(value, bool):
        return pb.f_varint(4, int(value))
    if isinstance(value, int):
        return pb.f_varint(8 if value >= 0 else 7, value)
    if isinstance(value, float):
        return pb.f_double(10, value)
    if isinstance(value, str):
        return pb.f_bytes(11, value)
    if isinstance(value, BytesAttr):
        value = bytes(value.size)
    if isinstance(value, (bytes, bytearray)):
        return pb.f_bytes(12, pb.f_bytes(1, bytes(value)))
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return pb.f_bytes(20, b"".join(pb.f_bytes(1, x) for x in value))
    if isinstance(value, list) and all(isinstance(x, int) for x in value):
        packed = b"".join(pb.varint(x) for x in value)
        return pb.f_bytes(16, pb.f_bytes(1, packed))
    if isinstance(value, list):
        return pb.f_bytes(19, pb.f_bytes(1, b"".join(struct.pack("<d", float(x)) for x in value)))
    raise TypeError("attribute value %r" % (value,))


def _int32_attr(value):
    """fix_point and friends are int32 in real xmodels."""
    return pb.f_varint(5, value)


INT32_ATTRS = {"fix_point", "bit_width", "round_mode", "if_signed"}


def _map_entry(number, key, value):
    body = _int32_attr(value) if key in INT32_ATTRS and isinstance(value, int) else _attr_bytes(value)
    return pb.f_bytes(number, pb.f_bytes(1, key) + pb.f_bytes(2, body))


def _tensor_bytes(t):
    out = pb.f_bytes(1, t.name)
    out += pb.f_bytes(2, b"".join(pb.varint(d) for d in t.dims))
    out += pb.f_varint(5, t.data_type) + pb.f_varint(6, t.bit_width)
    for k, v in t.attrs.items():
        out += _map_entry(10, k, v)
    return out


def _op_bytes(op):
    out = pb.f_bytes(1, op.name) + pb.f_bytes(2, op.type)
    for k, v in op.attrs.items():
        out += _map_entry(3, k, v)
    for arg, names in op.inputs.items():
        out += pb.f_bytes(4, pb.f_bytes(1, arg) + b"".join(pb.f_bytes(2, n) for n in names))
    out += pb.f_bytes(5, _tensor_bytes(op.tensor))
    return out


def _subgraph_bytes(sub):
    out = pb.f_bytes(1, sub.name)
    for n in sub.op_names:
        out += pb.f_bytes(3, n)
    for k, v in sub.attrs.items():
        out += _map_entry(5, k, v)
    for child in sub.children:
        out += pb.f_bytes(10, _subgraph_bytes(child))
    return out


def serialize(graph):
    out = pb.f_bytes(1, graph.name)
    for op in graph.ops.values():
        out += pb.f_bytes(5, _op_bytes(op))
    out += pb.f_bytes(10, _subgraph_bytes(graph.root))
    for k, v in graph.attrs.items():
        out += _map_entry(11, k, v)
    return out
