"""The run: decode → pre-process → DPU → post-process → draw and encode, each stage on its own
thread(s), joined by bounded queues so no stage runs far ahead of the others and memory
stays flat. `threads` DPU workers each own a runner per DPU subgraph, so that many jobs are
in flight at once and the DPU never waits for the CPU. Frames may finish post-processing out
of order; the writer puts them back in order before drawing and encoding.

numpy, OpenCV and the ffmpeg pipes release the GIL for their work, which is what lets Python
threads overlap here."""

import json
import os
import queue
import threading
import time

from .errors import Aborted, RunnerError

END = object()


class Stop:
    """Shared by every stage: the first failure stops them all."""

    def __init__(self):
        self.event = threading.Event()
        self.error = None
        self._lock = threading.Lock()

    def fail(self, error):
        with self._lock:
            if self.error is None:
                self.error = error
        self.event.set()

    def put(self, q, item):
        while True:
            if self.event.is_set():
                raise Aborted()
            try:
                q.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def get(self, q):
        while True:
            if self.event.is_set():
                raise Aborted()
            try:
                return q.get(timeout=0.1)
            except queue.Empty:
                continue


class Frame:
    __slots__ = ("index", "image", "t_read", "data", "outputs", "dpu_ms", "result")

    def __init__(self, index, image, t_read):
        self.index = index
        self.image = image
        self.t_read = t_read
        self.data = self.outputs = self.dpu_ms = self.result = None


class Stage:
    """`workers` threads taking from `inbox`, each item through `work`, onto `outbox`; the
    end mark passes on once every worker of the stage has seen it."""

    def __init__(self, name, workers, inbox, outbox, work, stop):
        self.name, self.inbox, self.outbox, self.work, self.stop = name, inbox, outbox, work, stop
        self.remaining = workers
        self._lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run, args=(i,), name="%s-%d" % (name, i), daemon=True) for i in range(workers)]

    def start(self):
        for t in self.threads:
            t.start()

    def _run(self, worker):
        try:
            while True:
                item = self.stop.get(self.inbox)
                if item is END:
                    self.stop.put(self.inbox, END)  # for the other workers of this stage
                    with self._lock:
                        self.remaining -= 1
                        last = self.remaining == 0
                    if last:
                        self.stop.put(self.outbox, END)
                    return
                self.work(worker, item)
                self.stop.put(self.outbox, item)
        except Aborted:
            return
        except BaseException as e:  # noqa: B902 - any failure stops the run, with its reason
            self.stop.fail(e)


class Timings:
    def __init__(self):
        self.latency_ms = []
        self.dpu_ms = []  # per frame, per subgraph
        self.t_first = None
        self.t_last = None


def run_pipeline(*, passes, open_decoder, preprocess, model, task, encoder, results_path, fps, threads, overlay, log):
    """Runs every pass over the video; returns Timings of the frames (all counted)."""
    stop = Stop()
    # Short queues: enough for every DPU worker to find its next frame ready, no more (each
    # frame waiting in a queue adds to every frame's latency, not to the throughput).
    q_pre, q_dpu, q_post, q_out = queue.Queue(2), queue.Queue(threads), queue.Queue(threads), queue.Queue(threads + 2)
    timings = Timings()

    def pre(_worker, frame):
        frame.data = preprocess(frame.image)

    def dpu(worker, frame):
        frame.outputs, frame.dpu_ms = model.run(worker, frame.data)
        frame.data = None

    def post(_worker, frame):
        frame.result = task.post(frame.outputs)
        frame.outputs = None

    def read():
        index = 0
        try:
            for _ in range(passes):
                decoder = open_decoder()
                try:
                    while True:
                        image = decoder.read()
                        if image is None:
                            break
                        now = time.perf_counter()
                        if timings.t_first is None:
                            timings.t_first = now
                        stop.put(q_pre, Frame(index, image, now))
                        index += 1
                finally:
                    decoder.close()
            stop.put(q_pre, END)
        except Aborted:
            return
        except BaseException as e:  # noqa: B902
            stop.fail(e)

    cpu_workers = 2 if (os.cpu_count() or 1) > 1 else 1
    stages = [
        Stage("pre", cpu_workers, q_pre, q_dpu, pre, stop),
        Stage("dpu", threads, q_dpu, q_post, dpu, stop),
        Stage("post", cpu_workers, q_post, q_out, post, stop),
    ]
    reader = threading.Thread(target=read, name="decode", daemon=True)
    reader.start()
    model.busy.reset()
    for s in stages:
        s.start()

    waiting = {}
    next_index = 0
    with open(results_path, "w", encoding="utf-8") as results:
        try:
            while True:
                item = stop.get(q_out)
                if item is END:
                    break
                waiting[item.index] = item
                while next_index in waiting:
                    frame = waiting.pop(next_index)
                    if overlay:
                        image = frame.image if frame.image.flags.writeable else frame.image.copy()
                        task.draw(image, frame.result)
                    else:
                        image = frame.image
                    encoder.write(image)
                    done = time.perf_counter()
                    latency = (done - frame.t_read) * 1000.0
                    timings.latency_ms.append(latency)
                    timings.dpu_ms.append(frame.dpu_ms)
                    timings.t_last = done
                    line = {"frame": frame.index, "t_ms": round(frame.index * 1000.0 / fps, 3), "latency_ms": round(latency, 3)}
                    for key, value in (frame.result or {}).items():
                        if not key.startswith("_"):
                            line[key] = [{k: v for k, v in x.items() if not k.startswith("_")} for x in value] if isinstance(value, list) else value
                    results.write(json.dumps(line, separators=(",", ":")) + "\n")
                    next_index += 1
                    if next_index % 100 == 0:
                        log("frames done: %d" % next_index)
        except Aborted:
            pass
        except BaseException as e:  # noqa: B902
            stop.fail(e)
    if stop.error is not None:
        stop.event.set()
        raise stop.error if isinstance(stop.error, Exception) else RunnerError(str(stop.error))
    reader.join(timeout=5)
    if waiting:
        raise RunnerError("frames %s never came back from the pipeline" % sorted(waiting)[:5])
    return timings
