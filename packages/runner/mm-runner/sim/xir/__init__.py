"""Stand-in for the Vitis AI runtime's `xir` Python module on the simulated board: the graph
of a real .xmodel (read by mm_dpu_sim.xmodel, protobuf by hand), with the parts of the API
mm-runner and AMD's examples use."""

from mm_dpu_sim import xmodel as _xm
from mm_dpu_sim.protobuf import DecodeError as _DecodeError


class Tensor:
    def __init__(self, t, fallback_attrs=None):
        self._t = t
        self.name = t.name
        self.dims = list(t.dims)
        self.dtype = t.dtype
        self._attrs = dict(fallback_attrs or {})
        self._attrs.update(t.attrs)

    def has_attr(self, name):
        return name in self._attrs

    def get_attr(self, name):
        if name not in self._attrs:
            raise ValueError("[XIR_UNREGISTERED_ATTR] tensor %s has no attribute %s" % (self.name, name))
        return self._attrs[name]

    def get_attrs(self):
        return dict(self._attrs)

    def get_dim_num(self):
        return len(self.dims)

    def get_element_num(self):
        n = 1
        for d in self.dims:
            n *= d
        return n

    def get_data_size(self):
        return self.get_element_num() * max(1, self._t.bit_width // 8)

    def __repr__(self):
        return "<xir.Tensor named '%s'>" % self.name


class Subgraph:
    def __init__(self, graph, sub):
        self._graph = graph
        self._sub = sub
        self.name = sub.name

    def get_name(self):
        return self.name

    @property
    def is_leaf(self):
        return not self._sub.children

    @property
    def is_root(self):
        return self._sub is self._graph.root

    def has_attr(self, name):
        return name in self._sub.attrs

    def get_attr(self, name):
        if name not in self._sub.attrs:
            raise ValueError("[XIR_UNREGISTERED_ATTR] subgraph %s has no attribute %s" % (self.name, name))
        return self._sub.attrs[name]

    def get_attrs(self):
        return dict(self._sub.attrs)

    def get_children(self):
        return [Subgraph(self._graph, c) for c in self._sub.children]

    def toposort_child_subgraph(self):
        return [Subgraph(self._graph, c) for c in self._graph.toposort_children(self._sub)]

    def _tensor(self, t):
        op = self._graph.ops.get(_producer(self._graph, t.name))
        return Tensor(t, {k: v for k, v in (op.attrs if op else {}).items() if k == "fix_point"})

    def get_input_tensors(self):
        return [self._tensor(t) for t in self._graph.input_tensors(self._sub)]

    def get_output_tensors(self):
        return [self._tensor(t) for t in self._graph.output_tensors(self._sub)]

    get_sorted_input_tensors = get_input_tensors
    get_sorted_output_tensors = get_output_tensors

    def get_graph(self):
        return Graph(self._graph)

    def __repr__(self):
        return "<xir.Subgraph named '%s'>" % self.name


def _producer(graph, tensor_name):
    for op in graph.ops.values():
        if op.tensor.name == tensor_name:
            return op.name
    return None


class Graph:
    def __init__(self, g):
        self._g = g

    @staticmethod
    def deserialize(path):
        try:
            return Graph(_xm.load(path))
        except (_DecodeError, UnicodeDecodeError, IndexError) as e:
            raise RuntimeError("[XIR_PROTOBUF_LOAD_FAILURE][Failed to load protobuf file.] %s: %s" % (path, e))
        except OSError as e:
            raise RuntimeError("[XIR_FILE_NOT_EXIST] %s: %s" % (path, e))

    def get_name(self):
        return self._g.name

    def get_root_subgraph(self):
        return Subgraph(self._g, self._g.root)

    def has_attr(self, name):
        return name in self._g.attrs

    def get_attr(self, name):
        return self._g.attrs[name]

    def get_op_num(self):
        return len(self._g.ops)
