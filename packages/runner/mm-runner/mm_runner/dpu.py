"""The model on the DPU through the Vitis AI runtime's Python API, as AMD's examples drive it:
`xir.Graph.deserialize`, the root subgraph's children in topological order, those whose
`device` is "DPU", one `vart.Runner.create_runner(subgraph, "run")` per subgraph and thread,
input/output tensors with their `fix_point`, `execute_async(inputs, outputs)` then `wait`.

A model may have several DPU subgraphs when each one after the first reads only tensors the
ones before it make (by name); a model with CPU operations between its DPU subgraphs needs
those operations, which mm-runner does not run: it says so before anything starts."""

import re
import threading
import time

import numpy as np

from .errors import InputProblem, RuntimeMissing
from .preprocess import tensor_dtype


def import_runtime():
    try:
        import vart  # noqa: F401
        import xir  # noqa: F401
    except ImportError as e:
        raise RuntimeMissing(
            "the Vitis AI runtime's Python modules (xir, vart) cannot be imported (%s): install VART's Python bindings "
            "on the board (docs/runner.md, \"What a board needs\")" % e
        )
    return xir, vart


class TensorInfo:
    def __init__(self, tensor):
        self.name = tensor.name
        self.dims = [int(d) for d in tensor.dims]
        self.dtype_name = str(getattr(tensor, "dtype", "xint8"))
        self.dtype = tensor_dtype(self.dtype_name)
        self.fix_point = int(tensor.get_attr("fix_point")) if tensor.has_attr("fix_point") else 0

    @property
    def scale(self):
        """Raw value × scale = real value (1 / 2^fix_point)."""
        return 2.0 ** -self.fix_point

    def __repr__(self):
        return "%s %s %s fix_point %d" % (self.name, self.dims, self.dtype_name, self.fix_point)


def metric_suffix(name, taken):
    """A subgraph's name as the tail of a metric name: [a-z0-9_], short, unique."""
    s = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:40] or "subgraph"
    base, i = s, 2
    while s in taken:
        s = "%s_%d" % (base[:36], i)
        i += 1
    taken.add(s)
    return s


class DpuBusy:
    """Wall time during which at least one DPU job was in flight: the DPU-only time."""

    def __init__(self):
        self._lock = threading.Lock()
        self._inflight = 0
        self._since = 0.0
        self.total = 0.0

    def begin(self):
        with self._lock:
            if self._inflight == 0:
                self._since = time.perf_counter()
            self._inflight += 1

    def end(self):
        with self._lock:
            self._inflight -= 1
            if self._inflight == 0:
                self.total += time.perf_counter() - self._since

    def reset(self):
        with self._lock:
            self.total = 0.0
            if self._inflight:
                self._since = time.perf_counter()


class DpuModel:
    def __init__(self, xmodel_path, threads, log):
        xir, vart = import_runtime()
        try:
            graph = xir.Graph.deserialize(xmodel_path)
        except Exception as e:  # the runtime raises its own types
            raise InputProblem("the weights file is not an xmodel the runtime can read: %s" % e)
        root = graph.get_root_subgraph()
        children = [] if root.is_leaf else root.toposort_child_subgraph()
        dpu = [s for s in children if s.has_attr("device") and str(s.get_attr("device")).upper() == "DPU"]
        if not dpu:
            devices = sorted({str(s.get_attr("device")) for s in children if s.has_attr("device")})
            raise InputProblem("the model has no DPU subgraph (its subgraphs run on %s): was it compiled for the DPU?" % (", ".join(devices) or "nothing"))
        self.names = [s.get_name() if hasattr(s, "get_name") else s.name for s in dpu]
        taken = set()
        self.metric_names = [metric_suffix(n, taken) for n in self.names]
        self.runner_sets = []
        try:
            for _ in range(threads):
                self.runner_sets.append([vart.Runner.create_runner(s, "run") for s in dpu])
        except Exception as e:
            raise InputProblem("the DPU runner could not be created for this model: %s" % e)
        first = self.runner_sets[0]
        self.inputs = [[TensorInfo(t) for t in r.get_input_tensors()] for r in first]
        self.outputs = [[TensorInfo(t) for t in r.get_output_tensors()] for r in first]
        if len(self.inputs[0]) != 1:
            raise InputProblem("the first DPU subgraph has %d inputs: mm-runner feeds one image" % len(self.inputs[0]))
        made = {t.name for t in self.outputs[0]}
        for i in range(1, len(dpu)):
            missing = [t.name for t in self.inputs[i] if t.name not in made]
            if missing:
                raise InputProblem(
                    "DPU subgraph %s reads %s, which no DPU subgraph before it makes (operations run on the CPU between "
                    "them): mm-runner runs models whose DPU subgraphs follow each other directly" % (self.names[i], ", ".join(missing))
                )
            made |= {t.name for t in self.outputs[i]}
        consumed = {t.name for ins in self.inputs[1:] for t in ins}
        self.final_outputs = [t for outs in self.outputs for t in outs if t.name not in consumed]
        self.input = self.inputs[0][0]
        self.busy = DpuBusy()
        for i, name in enumerate(self.names):
            log("DPU subgraph %s: inputs %s; outputs %s" % (name, self.inputs[i], self.outputs[i]))

    def run(self, worker, data):
        """Runs one frame's input through the DPU subgraphs on `worker`'s runners. Returns the
        final outputs by tensor name (raw values) and each subgraph's time in ms."""
        runners = self.runner_sets[worker]
        tensors = {self.input.name: data}
        times = []
        for i, runner in enumerate(runners):
            ins = [_requantize(tensors[t.name], t, self._info(t.name)) for t in self.inputs[i]]
            outs = [np.empty(t.dims, t.dtype, order="C") for t in self.outputs[i]]
            t0 = time.perf_counter()
            self.busy.begin()
            try:
                job = runner.execute_async(ins, outs)
                runner.wait(job)
            finally:
                self.busy.end()
            times.append((time.perf_counter() - t0) * 1000.0)
            for t, arr in zip(self.outputs[i], outs):
                tensors[t.name] = arr
        return {t.name: tensors[t.name] for t in self.final_outputs}, times

    def _info(self, name):
        for outs in self.outputs:
            for t in outs:
                if t.name == name:
                    return t
        return self.input

    def close(self):
        # VART releases the DPU when its runners go (the examples `del` them).
        self.runner_sets = []


def _requantize(arr, want, have):
    if have is want or have.fix_point == want.fix_point or not np.issubdtype(want.dtype, np.integer):
        return arr
    shift = want.fix_point - have.fix_point
    real = arr.astype(np.float32) * (2.0 ** shift)
    info = np.iinfo(want.dtype)
    return np.clip(np.round(real), info.min, info.max).astype(want.dtype)
