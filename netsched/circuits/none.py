"""``none``: never any circuit -- the packet core alone (the EPS-only
baseline on a hybrid fabric)."""
from .base import CircuitDecision, CircuitScheduler
from .registry import register


@register
class NoCircuits(CircuitScheduler):
    name = 'none'
    static = True

    def decide(self, snap):
        return CircuitDecision(circuits=frozenset())
