"""Host-side per-tensor priority: the P3 / ByteScheduler baseline."""
from .base import Decision, Policy
from .registry import register


@register
class P3(Policy):
    """Priority-based parameter propagation at the hosts only (P3,
    SysML 2019; ByteScheduler, SOSP 2019): parameter-server tensors go in
    slices of at most ``slice_mb`` and each connection sends its waiting
    slices front layers first (the lowest urgency: what the next forward
    pass needs first), so a front layer's gradient does not queue behind
    back layers' that became ready before it. Nothing in the network:
    every switch shares links per flow as under fair sharing. It is the
    host-only ordering that TensorExpress (in the switches) and Prophet
    (block ordering) are measured against. Reconstructed as a baseline:
    one slicing size and strict order per connection; the papers' credit
    and partition tuning are not modelled."""
    name = 'p3'
    params = {'slice_mb': 4.0}
    static = True                      # the network shares fairly

    def workload(self):
        return {'send_order': 'priority', 'slice_mb': self.slice_mb}

    def decide(self, snap):
        return Decision()
