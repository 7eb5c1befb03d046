"""FIFO: coflows in arrival order."""
from .base import Decision, Policy, arrival_order
from .registry import register


@register
class Fifo(Policy):
    """Coflows served in arrival order (FIFO), each at full priority over
    later ones; flows of one coflow share fairly."""
    name = 'fifo'
    decides_on = 'coflows'

    def decide(self, snap):
        return Decision(coflow_rank=arrival_order(snap))
