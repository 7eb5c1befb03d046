"""The emulated backend: Mininet with userspace Open vSwitch, tc
priority classes, the Ryu controller as a process, the host agents and
the runner that orchestrates them. Imports Mininet only inside
functions, so the package loads without it."""
