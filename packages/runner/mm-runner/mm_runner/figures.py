"""The run's figures for metrics.json: a flat map of at most 64 names ([a-z][a-z0-9_]*) to
finite numbers, the same names on every board (docs/runner.md, "Figures")."""

import json
import math
import os

MAX_NAMES = 64


def percentile(values, p):
    """The p-th percentile (0–100) by linear interpolation between closest ranks."""
    if not values:
        return None
    s = sorted(values)
    k = (len(s) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def run_figures(timings, busy_s, metric_names):
    frames = len(timings.latency_ms)
    out = {"frames": frames}
    if frames == 0:
        return out
    span = (timings.t_last - timings.t_first) if timings.t_first is not None and timings.t_last is not None else 0.0
    if span > 0:
        out["e2e_fps"] = round(frames / span, 3)
    if busy_s > 0:
        out["dpu_fps"] = round(frames / busy_s, 3)
    for p in (50, 95, 99):
        out["latency_ms_p%d" % p] = round(percentile(timings.latency_ms, p), 3)
    per_subgraph = list(zip(*timings.dpu_ms)) if timings.dpu_ms else []
    if per_subgraph:
        out["dpu_ms"] = round(sum(sum(t) for t in timings.dpu_ms) / frames, 3)
        for name, values in zip(metric_names, per_subgraph):
            out["dpu_ms_" + name] = round(sum(values) / len(values), 3)
    return out


def write_metrics(out_dir, figures):
    clean = {}
    for k, v in figures.items():
        if v is None or not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            continue
        if len(clean) >= MAX_NAMES:
            break
        clean[k[:64]] = v
    path = os.path.join(out_dir, "metrics.json")
    tmp = path + ".part"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(clean, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(tmp, path)
    return clean
