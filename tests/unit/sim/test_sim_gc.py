"""The simulator runs with the garbage collector paused (sim.runner), so
what a run makes in reference cycles as it goes must still be freed as
it goes: networkx's max_weight_matching, which a hybrid fabric's
matching scheduler calls at every decision, makes classes each call,
and a period_s of 1e-6 held 900 MB over 0.2 s of simulated time."""
import gc
import weakref

from netsched import fluid, policies
from netsched import topology as topo
from netsched.sim import engine as sim_engine


class _Log:
    def write(self, *a, **kw):
        pass


class _Cycles:
    """A driver whose every event leaves a reference cycle behind."""

    def __init__(self, n):
        self.n, self.alive = n, []

    def start(self, eng):
        for k in range(self.n):
            eng.at(1e-3 * (k + 1), self.make)

    def make(self):
        a, b = type('A', (), {})(), type('B', (), {})()
        a.b, b.a = b, a
        self.alive.append(weakref.ref(a))


def test_cycles_made_in_a_paused_collector_are_freed_as_the_run_goes():
    n = 3 * sim_engine.GC_EVENTS
    eng = sim_engine.Engine(fluid.Network(topo.fat_tree(4)),
                            policies.make('fair', {}), _Log())
    drv = _Cycles(n)
    was = gc.isenabled()
    gc.disable()
    try:
        eng.run(drv)
        left = sum(r() is not None for r in drv.alive)
    finally:
        if was:
            gc.enable()
    assert len(drv.alive) == n
    assert left <= sim_engine.GC_EVENTS
