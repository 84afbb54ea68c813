"""The simulated DPU: `cores` compute units (MM_SIM_DPU_CORES, default 1) that each run one job
at a time; a job takes the model's time per frame (the xmodel's `mm_sim_dpu_ms` graph
attribute, else MM_SIM_DPU_MS, else 10 ms) divided by the board's `sim/speed` label, or its
real compute time if that is longer. The job's time is slept, not burnt: the CPU stays free
for the pipeline around it, as with a real DPU.

The simulated board's INA260 and AMS sensors follow the DPU: when MM_HWMON_ROOT holds the
simulated board's hwmon folders (marked by an `mm-simulated` file), their `power1_input` and
`temp*_input` are rewritten every 10 ms: 6.4 W idle plus 4.8 W times the share of the last
interval the cores were busy; temperatures climbing towards +18/+24 °C with a 15 s time
constant."""

import atexit
import json
import os
import threading
import time

IDLE_W = 6.4
BUSY_W = 4.8
TICK_S = 0.01
THERMAL_TAU_S = 15.0
SENSORS = [("temp1_input", 47.0, 18.0), ("temp2_input", 51.0, 24.0)]


def board_speed():
    try:
        labels = json.loads(os.environ.get("MM_BOARD_LABELS") or "{}")
        speed = float(labels.get("sim/speed", 1))
        return speed if speed > 0 else 1.0
    except (ValueError, TypeError, AttributeError):
        return 1.0


def _write_atomic(path, text):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


class SimulatedDpu:
    def __init__(self):
        self.cores = max(1, int(os.environ.get("MM_SIM_DPU_CORES", "1") or 1))
        self.speed = board_speed()
        self._free = threading.Semaphore(self.cores)
        self._lock = threading.Lock()
        self._busy = 0
        self._busy_since = 0.0
        self._busy_accum = 0.0
        self.jobs = 0
        self._sensors = self._find_sensors()
        self._heat = 0.0
        if self._sensors:
            t = threading.Thread(target=self._sensor_loop, name="simulated-ina260", daemon=True)
            t.start()
            atexit.register(self._write_sensors, 0.0)

    def time_per_job(self, model_ms):
        env = os.environ.get("MM_SIM_DPU_MS")
        ms = float(env) if env else (model_ms if model_ms is not None else 10.0)
        return ms / 1000.0 / self.speed

    def run(self, seconds, compute):
        """Runs `compute()` as one job on a free core, taking at least `seconds`."""
        self._free.acquire()
        start = time.perf_counter()
        self._mark(+1)
        try:
            result = compute()
            left = seconds - (time.perf_counter() - start)
            if left > 0:
                time.sleep(left)
            self.jobs += 1
            return result
        finally:
            self._mark(-1)
            self._free.release()

    def _mark(self, delta):
        with self._lock:
            now = time.perf_counter()
            self._busy_accum += self._busy * (now - self._busy_since)
            self._busy_since = now
            self._busy += delta

    def _take_busy(self):
        with self._lock:
            now = time.perf_counter()
            self._busy_accum += self._busy * (now - self._busy_since)
            self._busy_since = now
            used, self._busy_accum = self._busy_accum, 0.0
            return used

    # ── the simulated board's sensors ──

    def _find_sensors(self):
        root = os.environ.get("MM_HWMON_ROOT")
        if not root or not os.path.exists(os.path.join(root, "mm-simulated")):
            return None
        found = {}
        try:
            for name in os.listdir(root):
                d = os.path.join(root, name)
                try:
                    with open(os.path.join(d, "name")) as f:
                        kind = f.read().strip()
                except OSError:
                    continue
                if kind.startswith("ina260"):
                    found["power"] = d
                elif kind == "ams":
                    found["ams"] = d
        except OSError:
            return None
        return found or None

    def _sensor_loop(self):
        last = time.perf_counter()
        while True:
            time.sleep(TICK_S)
            now = time.perf_counter()
            busy = self._take_busy()
            share = min(1.0, busy / max(1e-6, (now - last) * self.cores))
            k = 1.0 - pow(2.718281828, -(now - last) / THERMAL_TAU_S)
            self._heat += (share - self._heat) * k
            last = now
            try:
                self._write_sensors(share)
            except OSError:
                return

    def _write_sensors(self, share):
        s = self._sensors or {}
        if "power" in s:
            _write_atomic(os.path.join(s["power"], "power1_input"), "%d\n" % int((IDLE_W + BUSY_W * share) * 1e6))
        if "ams" in s:
            for name, idle, run in SENSORS:
                _write_atomic(os.path.join(s["ams"], name), "%d\n" % int((idle + run * self._heat) * 1000))


_DEVICE = None
_DEVICE_LOCK = threading.Lock()


def device():
    global _DEVICE
    with _DEVICE_LOCK:
        if _DEVICE is None:
            _DEVICE = SimulatedDpu()
        return _DEVICE
