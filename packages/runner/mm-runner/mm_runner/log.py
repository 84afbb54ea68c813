"""What the runner prints is the operation's live log: one line at a time, flushed."""

import sys


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def complain(line):
    sys.stderr.write("mm-runner: " + line + "\n")
    sys.stderr.flush()
