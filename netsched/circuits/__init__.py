"""Circuit schedulers for hybrid optical-circuit / electrical-packet
fabrics: pure functions from a CircuitSnapshot to a CircuitDecision.

Like the flow policies (netsched.policies), a circuit scheduler never
reads a clock, a global random generator or a file: what it needs is in
the snapshot, built by whichever backend runs it (the simulator or the
controller's scheduling core), in data-center units. The same code
therefore decides on both backends.

The fabric: T racks whose ToRs each have one port on each of P optical
circuit switch planes. A circuit ``(plane, i, j)``, i < j, joins ToR i's
and ToR j's ports on that plane and carries ``circuit_bps`` each way;
each plane's circuits are a matching of ToRs. A decision is the whole
configuration wanted (the backend diffs it against what is installed
and pays the reconfiguration delay on what changes) and when to ask
again; :func:`check_circuits` is the test of a valid configuration.

One file per scheduler (``none``, ``static``, ``matching``, ``osdl``);
what they share is in base.py, the registry in registry.py; reconfig.py
holds the steps of a reconfiguration, which both backends take. A
scheduler from outside the package is named by module path
(``package.module:ClassName``) or by an entry point of the group
``netsched.circuits``.
"""
from .base import (CircuitDecision, CircuitScheduler,  # noqa: F401
                   CircuitSnapshot, JobTraffic, check_circuits)
from .registry import REGISTRY, make, parse_spec, register  # noqa: F401
# every built-in module, so that the registry is whole once the package
# is imported (each registers its schedulers on import)
from . import matching, none, osdl, static  # noqa: F401
