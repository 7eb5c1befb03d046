"""What every circuit scheduler shares: the CircuitSnapshot it sees, the
JobTraffic of the jobs in it, the CircuitDecision it returns, the
CircuitScheduler base class, and check_circuits, the one test of a valid
circuit configuration.

A circuit is ``(plane, i, j)`` with ``i < j``: ToR ``i``'s port on OCS
plane ``plane`` joined to ToR ``j``'s port on the same plane. A ToR has
one port per plane, so each plane's circuits are a matching of ToRs and
a ToR has at most ``planes`` circuits. A circuit is bidirectional: it
carries ``circuit_bps`` from i to j and ``circuit_bps`` from j to i.
"""
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class JobTraffic:
    """One DL job as a circuit scheduler sees it: what one of its
    iterations sends between racks. ``pair_bytes``: {(i, j): bytes one
    iteration sends from ToR i to ToR j} (i != j; ToR indices of the
    snapshot's ``tors``; traffic inside a rack is not listed)."""
    id: str
    arrival: float
    pair_bytes: dict
    iterations_left: int


@dataclass(frozen=True)
class CircuitSnapshot:
    """What a circuit scheduler sees (built by either backend)."""
    t: float                      # s
    tors: tuple                   # ToR names; indices below follow this order
    planes: int                   # P: OCS planes, i.e. circuits per ToR
    demand: np.ndarray            # (T, T) bytes ToR i has still to send to
    #                               ToR j (in flight + known pending), i != j
    circuits: frozenset           # the circuits now: {(plane, i, j)}, i < j
    since: dict                   # circuit -> when it was set up (s)
    circuit_bps: float            # one circuit's rate, each direction
    packet_bps: np.ndarray        # (T,) each ToR's uplink to the packet core
    reconfig_s: float             # the OCS's reconfiguration delay (blackout)
    jobs: dict = field(default_factory=dict)   # job id -> JobTraffic

    @property
    def n_tors(self):
        return len(self.tors)


@dataclass(frozen=True)
class CircuitDecision:
    circuits: frozenset           # the circuits wanted: {(plane, i, j)}, i < j
    recheck_at: float = None      # absolute time to decide again (None: when
    #                               the backend's inputs change, only)


def check_circuits(circuits, n_tors, planes):
    """The circuits as a frozenset, after checking that they are a valid
    configuration of ``n_tors`` ToRs on ``planes`` planes: every circuit
    a (plane, i, j) of integers with 0 <= plane < planes and
    0 <= i < j < n_tors, and no port (plane, ToR) in two circuits (so at
    most ``planes`` circuits per ToR). Raises ValueError naming the first
    fault."""
    out, port = set(), {}
    for c in circuits:
        if (not isinstance(c, tuple) or len(c) != 3
                or not all(isinstance(x, (int, np.integer)) for x in c)):
            raise ValueError('circuit %r: not a (plane, i, j) of integers'
                             % (c,))
        k, i, j = (int(x) for x in c)
        if not 0 <= k < planes:
            raise ValueError('circuit %r: plane %d out of range (%d planes)'
                             % (c, k, planes))
        if not 0 <= i < j < n_tors:
            raise ValueError('circuit %r: needs 0 <= i < j < %d'
                             % (c, n_tors))
        for tor in (i, j):
            if (k, tor) in port:
                raise ValueError('port %d of ToR %d (plane %d) is in two '
                                 'circuits: %r and %r'
                                 % (k, tor, k, port[(k, tor)], c))
            port[(k, tor)] = c
        out.add((k, i, j))
    return frozenset(out)


def clean_demand(demand, n_tors):
    """(T, T) float demand with NaN, negatives and the diagonal at 0."""
    d = np.nan_to_num(np.asarray(demand, float).reshape(n_tors, n_tors),
                      nan=0.0, posinf=0.0, neginf=0.0)
    d = np.clip(d, 0.0, None)
    np.fill_diagonal(d, 0.0)
    return d


def busy_ports(circuits):
    """{(plane, ToR)} of the ports the circuits use."""
    return {(k, t) for k, i, j in circuits for t in (i, j)}


class CircuitScheduler:
    """Base: a circuit scheduler has a name, checked parameters
    (``params``: parameter -> default; make() checks them: numbers must
    be positive, or >= 0 for those in ``zero_ok``; a whole number where
    the default is an int) and decide().

    ``decide(snap)`` returns a CircuitDecision: the whole configuration
    wanted (the backend diffs it against the circuits it has, tears the
    old ones down and sets the new ones up after the reconfiguration
    delay), and when to ask again. It is a pure function of the
    snapshot: no clock, no I/O, no global random state; asking twice
    with the same snapshot gives the same decision. When a backend asks:

    - ``decides_on``: ``'period'``: at the start and at ``recheck_at``
      only (a periodic scheduler: asking in between is allowed, and
      gives a fresh decision, but is not what its period means);
      ``'jobs'``: at the start, whenever the set of jobs changes, and at
      ``recheck_at`` if one is given; ``'never'``: the scheduler decides
      nothing, ever (``static``): no need to ask at all.
    - ``needs``: what the scheduler reads: ``'demand'`` (the ToR demand
      matrix) and/or ``'jobs'`` (the jobs' JobTraffic). A backend need
      not compute what is not needed (leave ``demand`` zeros, ``jobs``
      empty).
    """
    name = None
    params = {}                    # parameter -> default
    zero_ok = ()                   # numeric parameters that may be 0
    decides_on = 'never'
    needs = ()
    static = False

    def __init__(self, **params):
        for k, v in dict(self.params, **params).items():
            setattr(self, k, v)

    def decide(self, snap):
        raise NotImplementedError

    def place(self, jobs, candidates, snap):
        """Which of a job's candidate placements to take (an index into
        ``candidates``). ``jobs``: the jobs placed before it ({id:
        JobTraffic}, ToR indices of ``snap``); ``candidates``: the job as
        it would be on each candidate placement (a JobTraffic each, same
        id); ``snap``: a CircuitSnapshot of the fabric, of which only
        the static part is read (tors, planes, circuit_bps, packet_bps,
        reconfig_s). A scheduler that does not place takes the first."""
        return 0
