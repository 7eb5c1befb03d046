"""Host-side per-tensor priority: the P3 and ByteScheduler baselines."""
from .base import Decision, Policy, checked_partitions
from .prophet import BYTEPS_PARTITION_MB
from .registry import register


@register
class P3(Policy):
    """Priority-based parameter propagation at the hosts only (P3,
    SysML 2019; ByteScheduler's order without its credit):
    parameter-server tensors go in slices of at most ``slice_mb`` and each
    connection sends its waiting slices front layers first (the lowest
    urgency: what the next forward pass needs first), so a front layer's
    gradient does not queue behind back layers' that became ready before
    it. Nothing in the network:
    every switch shares links per flow as under fair sharing. It is the
    host-only ordering that TensorExpress (in the switches) and Prophet
    (block ordering) are measured against. Reconstructed as a baseline:
    one slicing size and strict order per connection, no bound on what
    is in flight (ByteScheduler's credit: the ``bytescheduler`` policy
    below)."""
    name = 'p3'
    params = {'slice_mb': 4.0}
    static = True                      # the network shares fairly

    def workload(self):
        return {'send_order': 'priority', 'slice_mb': self.slice_mb}

    def decide(self, snap):
        return Decision()


@register
class ByteScheduler(Policy):
    """A ByteScheduler-like host scheduler (SOSP 2019): each worker's
    gradient tensors are cut into partitions of ``partition_mb`` (as
    BytePS cuts them, ``partitions: byteps``: whole partitions, the
    remainder last; ``equal``: equal slices of at most that), and a
    per-worker scheduler releases its ready partitions strictly highest
    priority (front layers) first while the bytes released and not yet
    done stay within ``credit_mb`` (one always goes when none is
    outstanding): the credit keeps the network busy while a partition
    that becomes ready later can still overtake what has not been
    released. Nothing in the network: links are shared per flow as under
    fair sharing (``static``).

    Unlike ``p3`` (each connection picks its front-most waiting slice,
    with no bound on what is already in flight), the order and the
    credit are per worker, across its connections. The sender is Prophet's
    tail from the first iteration, without profiling or blocks (the
    ``bytescheduler`` mode of ``host/prophet.py``, which both
    backends' executors run); a job asks for it itself with ``send_order:
    bytescheduler``. Reconstructed: ByteScheduler tunes the partition
    size and the credit online (Bayesian optimisation); here both are
    fixed knobs: partitions of 4,096,000 B (BytePS' default, 3.90625
    MiB), a credit of 4 MiB. "Done" is when the backend says a send is:
    its last byte received in the simulator, written in the emulator's
    agents."""
    name = 'bytescheduler'
    params = {'partition_mb': BYTEPS_PARTITION_MB, 'credit_mb': 4.0,
              'partitions': 'byteps'}
    static = True                      # the network shares fairly

    def __init__(self, **params):
        super().__init__(**params)
        self.partitions = checked_partitions(self.name, self.partitions)

    def workload(self):
        return {'send_order': 'bytescheduler',
                'slice_mb': self.partition_mb,
                'partitions': self.partitions,
                'bytescheduler': {'credit_mb': float(self.credit_mb)}}

    def warnings(self, jobs):
        if not jobs:
            return ['bytescheduler orders DL jobs\' gradient sends: the '
                    'experiment has none, so it is fair sharing']
        return []

    def decide(self, snap):
        return Decision()
