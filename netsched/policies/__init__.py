"""Scheduling policies: pure functions from a Snapshot to a Decision.

A policy never reads a clock, a global random generator or a file: what
it needs is in the snapshot, built by whichever backend runs it (the
flow-level simulator or the controller's scheduling core), in data-center
units. The same code therefore decides on both backends.

A Decision may give, per coflow, a ``rank`` (0 = most urgent) and an
``order`` that breaks ties inside a rank; per flow an explicit rate
(bit/s; NaN = none); and a time at which to ask again. The backends turn
ranks into priority classes with :func:`flow_priority`: class
min(rank, Q-1) with Q strict-priority queues, or, where the experiment
says ``queues: exact`` (simulator only), the full (rank, order) order.
Flows of one class share by max-min fairness; explicit rates are
reserved first and what they leave is back-filled by class.

One file per policy (or family); what they share is in base.py, the
registry in registry.py. A policy from outside the package is named by
module path (``package.module:ClassName``) or by an entry point of the
group ``netsched.policies`` (docs/writing-a-policy.md).
"""
from .base import (PARTITIONS, Decision, JobView, Policy,  # noqa: F401
                   Snapshot, arrival_order, asks_per_flow, coflow_class,
                   flow_priority, one_capacity, stable_classes,
                   urgency_class, with_flow_classes)
from .registry import REGISTRY, make, parse_spec, register  # noqa: F401
# every built-in module, so that the registry is whole once the package
# is imported (each registers its policies on import)
from . import (aalo, beamer, cassini, fair, fifo, fifolm, geryon,  # noqa: F401
               jpas, las, p3, prophet, sincronia, tensorexpress,
               varys)
