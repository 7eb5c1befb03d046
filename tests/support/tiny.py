"""What the pipeline's tests share: a tiny experiment (two ring jobs
across a dumbbell, communication only; about a second per `netsched
run` on the simulator, a few seconds on the emulator) and a Ctrl-C in
the middle of a sweep."""
import time

TINY = """
name: tiny
backend: sim
topology: dumbbell,2
link_gbps: 10
scale: 250
jobs:
  - {id: small, model: resnet50, pattern: ring, workers: 2, iterations: 2,
     compute_scale: 0, placement: [hl0, hr0]}
  - {id: large, model: vgg16, pattern: ring, workers: 2, iterations: 1,
     arrival_s: 0.01, compute_scale: 0, placement: [hl1, hr1]}
"""
# the same with Poisson arrivals, so that the seed matters
TINY_RANDOM = TINY.replace('arrival_s: 0.01,', '') + \
    'arrivals: {rate_per_s: 20}\n'


def interrupt_when(proc, ready, interrupt, wait_s=120, stop_s=300):
    """Wait (at most ``wait_s``) until ``ready()``, then ``interrupt()``
    (a SIGINT, as Ctrl-C); returns (whether it was ready, the process's
    stderr) once it has exited, killing it if it outlives ``stop_s``."""
    try:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and not ready():
            time.sleep(0.1)
        was = ready()
        interrupt()
        _, err = proc.communicate(timeout=stop_s)
        return was, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
