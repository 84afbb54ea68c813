"""Stand-in for the Vitis AI runtime's `vart` Python module on the simulated board. A runner of
a DPU subgraph takes int8 NHWC numpy arrays shaped like the real model's tensors, computes
mm_dpu_sim.functions' function of the real input on the simulated DPU (mm_dpu_sim.device) and
writes quantized outputs, through the same calls as the real one: create_runner,
get_input_tensors / get_output_tensors (with `fix_point`), execute_async → (job id, status),
wait."""

import itertools
import json
import queue
import threading

import numpy as np

import xir
from mm_dpu_sim import functions as fn
from mm_dpu_sim.device import device

_DEFAULT_FIX = {"input": 7, "output": 3}


class _RunnerTensor:
    """A DPU runner's tensor: the subgraph's, as int8 with its fix_point."""

    def __init__(self, t, fix):
        self.name = t.name
        self.dims = list(t.dims)
        self.dtype = "xint8"
        self._fix = int(t.get_attr("fix_point")) if t.has_attr("fix_point") else fix

    def has_attr(self, name):
        return name == "fix_point"

    def get_attr(self, name):
        if name != "fix_point":
            raise ValueError("tensor %s has no attribute %s" % (self.name, name))
        return self._fix

    def get_data_size(self):
        n = 1
        for d in self.dims:
            n *= d
        return n

    get_element_num = get_data_size

    def get_dim_num(self):
        return len(self.dims)

    def __repr__(self):
        return "{name: '%s', shape: %s, type: 'xint8', fix_point: %d}" % (self.name, self.dims, self._fix)


class Runner:
    @staticmethod
    def create_runner(subgraph, mode="run"):
        if not isinstance(subgraph, xir.Subgraph):
            raise TypeError("create_runner takes an xir.Subgraph")
        device_name = str(subgraph.get_attr("device")) if subgraph.has_attr("device") else "?"
        if device_name.upper() != "DPU":
            raise RuntimeError("[VART_NOT_SUPPORTED] subgraph %s runs on %s, not the DPU" % (subgraph.name, device_name))
        if mode != "run":
            raise RuntimeError("[VART_NOT_SUPPORTED] mode %r" % mode)
        return _DpuRunner(subgraph)


class _DpuRunner:
    _ids = itertools.count(1)

    def __init__(self, subgraph):
        self._subgraph = subgraph
        graph = subgraph._graph
        self._inputs = [_RunnerTensor(t, _DEFAULT_FIX["input"]) for t in subgraph.get_input_tensors()]
        self._outputs = [_RunnerTensor(t, _DEFAULT_FIX["output"]) for t in subgraph.get_output_tensors()]
        attrs = graph.attrs
        self._kind = str(attrs.get("mm_sim_model") or _guess(self._inputs, self._outputs))
        ms = attrs.get("mm_sim_dpu_ms")
        self._device = device()
        self._seconds = self._device.time_per_job(float(ms) if ms is not None else None)
        anchors = attrs.get("mm_sim_anchors")
        self._anchors = json.loads(anchors) if isinstance(anchors, str) else fn.DEFAULT_ANCHORS
        self._jobs = queue.Queue()
        self._done = {}
        self._lock = threading.Condition()
        threading.Thread(target=self._work, name="dpu-sim", daemon=True).start()

    def get_input_tensors(self):
        return list(self._inputs)

    def get_output_tensors(self):
        return list(self._outputs)

    def execute_async(self, inputs, outputs):
        if len(inputs) != len(self._inputs) or len(outputs) != len(self._outputs):
            raise RuntimeError("[VART_TENSOR_INFO_ERROR] %d inputs and %d outputs expected" % (len(self._inputs), len(self._outputs)))
        for arr, t in zip(list(inputs) + list(outputs), self._inputs + self._outputs):
            if tuple(np.shape(arr)) != tuple(t.dims):
                raise RuntimeError("[VART_TENSOR_INFO_ERROR] tensor %s is %s, the runner's is %s" % (t.name, list(np.shape(arr)), t.dims))
        job = next(self._ids)
        self._jobs.put((job, inputs, outputs))
        return (job, 0)

    def wait(self, job, timeout=-1):
        job_id = job[0] if isinstance(job, tuple) else job
        with self._lock:
            ok = self._lock.wait_for(lambda: job_id in self._done, None if timeout is None or timeout < 0 else timeout / 1000.0)
            if not ok:
                return -1
            error = self._done.pop(job_id)
        if error is not None:
            raise RuntimeError("[VART_DPU_RUN_FAILED] %s" % error)
        return 0

    def _work(self):
        while True:
            job, inputs, outputs = self._jobs.get()
            error = None
            try:
                self._device.run(self._seconds, lambda: self._compute(inputs, outputs))
            except Exception as e:  # noqa: BLE001 - reported to wait()
                error = e
            with self._lock:
                self._done[job] = error
                self._lock.notify_all()

    def _compute(self, inputs, outputs):
        t_in = self._inputs[0]
        image = fn.dequantize(np.asarray(inputs[0])[0], t_in.get_attr("fix_point"))
        kind = self._kind
        if kind == "classifier":
            t = self._outputs[0]
            count = t.get_data_size() // max(1, t.dims[0])
            outputs[0].reshape(t.dims[0], -1)[0, :] = fn.quantize(fn.classify(image, count), t.get_attr("fix_point"))
        elif kind in ("yolov3", "yolov5", "yolox"):
            order = sorted(range(len(self._outputs)), key=lambda i: -(self._outputs[i].dims[1] * self._outputs[i].dims[2]))
            in_h = t_in.dims[1]
            heads = [(self._outputs[i].dims[1], self._outputs[i].dims[2], self._outputs[i].dims[3], in_h // self._outputs[i].dims[1]) for i in order]
            a = 1 if kind == "yolox" else len(self._anchors[0]) // 2
            count = heads[0][2] // a - 5
            raws = fn.encode_yolo(fn.find_boxes(image), heads, kind, self._anchors, count)
            for i, raw in zip(order, raws):
                outputs[i][0] = fn.quantize(raw, self._outputs[i].get_attr("fix_point"))
        elif kind == "segmenter":
            t = self._outputs[0]
            outputs[0][0] = fn.quantize(fn.segment(image, t.dims[1], t.dims[2], t.dims[3]), t.get_attr("fix_point"))
        else:
            for arr in outputs:
                arr[...] = 0


def _guess(inputs, outputs):
    """What a model without the builder's `mm_sim_model` attribute is taken for, by shapes."""
    if len(outputs) == 1 and sum(1 for d in outputs[0].dims if d > 1) <= 1:
        return "classifier"
    if len(outputs) >= 2 and all(len(t.dims) == 4 for t in outputs):
        return "yolov3"
    if len(outputs) == 1 and len(outputs[0].dims) == 4 and inputs and outputs[0].dims[1] * 8 >= inputs[0].dims[1]:
        return "segmenter"
    return "identity"
