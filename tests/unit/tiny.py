"""A tiny experiment for the pipeline's tests: two ring jobs across a
dumbbell, communication only; about a second per `netsched run` on the
simulator, a few seconds on the emulator."""

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
