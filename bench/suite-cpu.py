#!/usr/bin/env python3
"""Where a command's CPU goes, by kind of process (docs/testing.md, "Where the suite's time goes").

    python3 bench/suite-cpu.py -- npx -y pnpm@10 test

Runs the command and, every half second until it ends, reads each process's CPU time from
/proc; at the end prints the CPU-seconds of the processes that ran meanwhile, summed by kind
(the simulated runner, server and agent children, Chromium, PostgreSQL, vitest's workers…),
and the command's own wall time. A process that lives less than half a second may be missed,
and processes already running when it starts count only what they use meanwhile: the figures
are a floor, for comparing kinds, not an exact total. Linux only.
"""
import collections
import os
import subprocess
import sys
import time

HZ = os.sysconf('SC_CLK_TCK')


def kind(args: str) -> str:
    if 'chromium' in args or 'chrome' in args:
        return 'chromium'
    if args.startswith('postgres') or 'bin/postgres' in args:
        return 'postgres'
    if 'simulated-runner' in args:
        return 'simulated runner'
    if 'python' in args:
        return 'python (mm-runner)'
    if 'ffmpeg' in args:
        return 'ffmpeg'
    if 'vitest' in args and 'workers/' in args:
        return 'vitest workers'
    if 'vitest' in args:
        return 'vitest main'
    if 'mm-server' in args or 'server/src/main' in args:
        return 'server processes'
    if 'mm-agent' in args or 'agent/src/main' in args or 'agent/dist' in args:
        return 'agent processes'
    if 'mm.mjs' in args:
        return 'mm (cli)'
    if 'tsc' in args:
        return 'tsc'
    if 'node' in args.split(' ')[0]:
        script = next((a for a in args.split(' ')[1:] if not a.startswith('-')), '')
        return 'node ' + os.path.basename(script)
    return 'other: ' + os.path.basename(args.split(' ')[0])


def snapshot(before: dict, seen: dict) -> None:
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open(f'/proc/{pid}/stat') as f:
                stat = f.read()
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                args = f.read().replace(b'\0', b' ').decode(errors='replace').strip()
        except OSError:
            continue
        fields = stat[stat.rindex(')') + 2:].split()
        ticks = int(fields[11]) + int(fields[12])
        key = (pid, fields[19])  # pid and start time: a reused pid is another process
        if key in before:
            continue
        name = seen[key][0] if key in seen else kind(args)
        seen[key] = (name, ticks)


def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ['--']:
        argv = argv[1:]
    if not argv:
        print(__doc__)
        return 2
    before: dict = {}
    snapshot({}, before)  # what ran already is left out
    seen: dict = {}
    started = time.monotonic()
    child = subprocess.Popen(argv)
    while child.poll() is None:
        snapshot(before, seen)
        time.sleep(0.5)
    wall = time.monotonic() - started
    totals: collections.Counter = collections.Counter()
    for name, ticks in seen.values():
        totals[name] += ticks / HZ
    print(f'\nwall {wall / 60:.1f} min; CPU seen {sum(totals.values()) / 60:.1f} min, by kind:', file=sys.stderr)
    for name, seconds in totals.most_common(15):
        print(f'{seconds:9.1f} s  {name}', file=sys.stderr)
    return child.returncode


if __name__ == '__main__':
    sys.exit(main())
