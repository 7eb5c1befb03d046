"""Per-flow fair sharing (the baseline every policy is judged against)."""
from .base import Decision, Policy
from .registry import register


@register
class Fair(Policy):
    """Per-flow fair sharing: no decision, every flow in one class; TCP
    (emulator) or max-min fairness (simulator) shares the links."""
    name = 'fair'
    decides_on = 'coflows'
    static = True

    def decide(self, snap):
        return Decision()
