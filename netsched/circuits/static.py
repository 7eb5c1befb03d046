"""``static``: circuits fixed by hand for the whole run -- a list of ToR
pairs, each taking the lowest plane on which both ToRs have a free port.
For experiments that compare a hand-chosen configuration, and for the
emulator's tests of the OCS itself (circuits that exist from the start,
after one reconfiguration)."""
from .base import CircuitDecision, CircuitScheduler
from .registry import register
from ..errors import ConfigError


@register
class Static(CircuitScheduler):
    """``pairs``: [[ToR, ToR], ...] by name (t0, t1, ...)."""
    name = 'static'
    params = {'pairs': ()}
    decides_on = 'jobs'            # once, at the start

    def __init__(self, **params):
        super().__init__(**params)
        if not isinstance(self.pairs, (list, tuple)) or not all(
                isinstance(p, (list, tuple)) and len(p) == 2
                and all(isinstance(x, str) for x in p) and p[0] != p[1]
                for p in self.pairs):
            raise ConfigError('static: pairs must be a list of [ToR, ToR] '
                              'name pairs (two different ToRs), got %r'
                              % (self.pairs,))
        self.pairs = tuple(tuple(p) for p in self.pairs)

    def check(self, tors, planes):
        """That the pairs fit a fabric of these ToR names and ``planes``
        circuits per ToR (experiment files are checked with it)."""
        self.circuits(tuple(tors), planes)

    def circuits(self, tors, planes):
        index = {t: i for i, t in enumerate(tors)}
        used, out = set(), set()
        for a, b in self.pairs:
            for t in (a, b):
                if t not in index:
                    raise ConfigError('static: %r is not a ToR of this '
                                      'fabric (%s)' % (t, ', '.join(tors)))
            i, j = sorted((index[a], index[b]))
            free = [k for k in range(planes)
                    if (k, i) not in used and (k, j) not in used]
            if not free:
                raise ConfigError('static: %s-%s: no plane has a free port '
                                  'on both ToRs (%d circuits per ToR)'
                                  % (a, b, planes))
            used |= {(free[0], i), (free[0], j)}
            out.add((free[0], i, j))
        return frozenset(out)

    def decide(self, snap):
        return CircuitDecision(circuits=self.circuits(snap.tors,
                                                      snap.planes))
