"""The board's power and temperatures while the model runs, from hwmon (MM_HWMON_ROOT, default
/sys/class/hwmon): an `ina260` power monitor's `power1_input` (microwatts) sampled every
MM_RUNNER_POWER_INTERVAL_MS (20) on a thread of its own, each sample with its time, and every
`temp*_input` for the hottest reading. The idle power is measured just before the run (the
DPU loaded, nothing running) and subtracted for the energy per frame, which takes only the
samples inside the run's window."""

import os
import threading
import time

PLAUSIBLE_C = (-60.0, 200.0)


def hwmon_root():
    return os.environ.get("MM_HWMON_ROOT", "/sys/class/hwmon")


def _read(path):
    try:
        with open(path, "r") as f:
            return f.read().strip()
    except OSError:
        return None


def _hwmon_dirs(root):
    try:
        names = [n for n in os.listdir(root) if n.startswith("hwmon") and n[5:].isdigit()]
    except OSError:
        return []
    return [os.path.join(root, n) for n in sorted(names, key=lambda n: int(n[5:]))]


def find_ina260(root):
    """(the power1_input file, a description of the rail) of the first INA260, or None."""
    for d in _hwmon_dirs(root):
        name = _read(os.path.join(d, "name")) or ""
        if name == "ina260" or name.startswith("ina260"):
            f = os.path.join(d, "power1_input")
            if os.path.exists(f):
                label = _read(os.path.join(d, "label")) or _read(os.path.join(d, "device", "of_node", "label")) or _read(os.path.join(d, "device", "of_node", "name"))
                rail = label.strip("\x00") if label else "the rail it is wired to"
                return f, "INA260 %s at %s (%s)" % (name, os.path.basename(d), rail)
    return None


def temperature_files(root):
    files = []
    for d in _hwmon_dirs(root):
        try:
            for n in sorted(os.listdir(d)):
                if n.startswith("temp") and n.endswith("_input"):
                    files.append(os.path.join(d, n))
        except OSError:
            continue
    return files


class PowerMeter:
    def __init__(self, root=None, interval_s=None):
        self.root = root or hwmon_root()
        self.interval = interval_s if interval_s is not None else float(os.environ.get("MM_RUNNER_POWER_INTERVAL_MS", "20")) / 1000.0
        found = find_ina260(self.root)
        self.power_file, self.rail = found if found else (None, None)
        self.temp_files = temperature_files(self.root)
        self.samples = []  # (perf_counter time, watts)
        self.max_temperature = None
        self._stop = threading.Event()
        self._thread = None

    @property
    def has_power(self):
        return self.power_file is not None

    def read_power(self):
        text = _read(self.power_file) if self.power_file else None
        try:
            uw = int(text)
        except (TypeError, ValueError):
            return None
        return uw / 1e6 if uw >= 0 else None

    def read_temperature(self):
        hottest = None
        for f in self.temp_files:
            try:
                c = int(_read(f)) / 1000.0
            except (TypeError, ValueError):
                continue
            if PLAUSIBLE_C[0] <= c <= PLAUSIBLE_C[1] and (hottest is None or c > hottest):
                hottest = c
        return hottest

    def start(self):
        if self._thread is None and (self.power_file or self.temp_files):
            self._thread = threading.Thread(target=self._loop, name="power", daemon=True)
            self._thread.start()

    def _loop(self):
        next_temp = 0.0
        while not self._stop.is_set():
            now = time.perf_counter()
            w = self.read_power()
            if w is not None:
                self.samples.append((time.perf_counter(), w))
            if now >= next_temp:
                c = self.read_temperature()
                if c is not None and (self.max_temperature is None or c > self.max_temperature):
                    self.max_temperature = c
                next_temp = now + 0.25
            self._stop.wait(self.interval)

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=2)

    def measure_idle(self, seconds):
        """Mean power over `seconds` from now (nothing runs meanwhile), or None."""
        if not self.power_file:
            return None
        start = time.perf_counter()
        time.sleep(seconds)
        return self.mean_between(start, time.perf_counter())

    def window(self, t0, t1):
        return [(t, w) for t, w in self.samples if t0 <= t <= t1]

    def mean_between(self, t0, t1):
        inside = self.window(t0, t1)
        if not inside:
            return None
        return sum(w for _t, w in inside) / len(inside)


def energy_figures(meter, t0, t1, frames, idle_w):
    """mean_power_w over the run's window, and the energy per frame above idle, in mJ."""
    mean = meter.mean_between(t0, t1)
    if mean is None:
        return {}
    out = {"mean_power_w": round(mean, 3), "power_samples": len(meter.window(t0, t1))}
    if idle_w is not None:
        out["idle_power_w"] = round(idle_w, 3)
        if frames > 0:
            out["energy_mj_per_frame"] = round(max(0.0, mean - idle_w) * (t1 - t0) / frames * 1000.0, 3)
    return out
