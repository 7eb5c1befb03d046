"""Prophet: host-side gradient blocks, the network shared per flow."""
from .base import Decision, Policy, checked_partitions
from .registry import register

# BytePS' default partition (BYTEPS_PARTITION_BYTES), 4,096,000 B, in
# the MiB slice_mb counts in
BYTEPS_PARTITION_MB = 4096000 / 2 ** 20


@register
class Prophet(Policy):
    """Prophet (ICPP 2021): each worker profiles when its gradients become
    ready during back-propagation and the bandwidth its sends get, groups
    the gradients at the large gaps between ready times, sends in each gap
    a block of gap x bandwidth bytes of the ready gradients, front layers
    first, and once layer 0's gradient is ready the rest in strict
    priority order under a byte credit. Nothing in the network: every
    switch shares links per flow as under fair sharing (``static``).

    The plan and the sender are in ``host/prophet.py`` (no numpy:
    the emulator's agents run it too, on the system Python); both
    backends' executors call that code. This class only asks the
    workload for it: every job's gradient sends go through a Prophet
    sender (``send_order: prophet``, which a job can also ask for itself
    under any network policy), its ps tensors in partitions cut as
    BytePS cuts them (``partitions: byteps``: whole partitions of
    ``slice_mb``, the remainder last; ``equal``: netsched's equal
    slices of at most ``slice_mb``), 4,096,000 B by default as in
    BytePS. A job's own ``slice_mb`` wins over the policy's.

    From the public code (a BytePS fork): the grouping (a gap over twice
    the mean gap between consecutive ready instants ends a group), the
    block budget gap x bandwidth filled highest priority first while the
    remaining budget is greater than the next partition (a strict test),
    the tail in strict priority under a credit once layer 0 is ready,
    and BytePS' partitions (4,096,000 B, the remainder last).
    Reconstructed: profiling over ``profile_iterations`` iterations in
    ready order (the mean ready offset per gradient from its iteration's
    backward start; the bandwidth as bytes over the time the sends were
    busy), a block opening at its group's profiled end and its parts
    going as they are ready, the credit counting every released byte not
    yet done, ``credit_mb`` 4 (the paper tunes it).
    Knobs: ``profile_iterations`` 2, ``credit_mb`` 4, ``slice_mb``
    3.90625 (4,096,000 B), ``partitions`` byteps."""
    name = 'prophet'
    params = {'profile_iterations': 2, 'credit_mb': 4.0,
              'slice_mb': BYTEPS_PARTITION_MB, 'partitions': 'byteps'}
    static = True                      # the network shares fairly

    def __init__(self, **params):
        super().__init__(**params)
        self.partitions = checked_partitions(self.name, self.partitions)

    def workload(self):
        return {'send_order': 'prophet', 'slice_mb': self.slice_mb,
                'partitions': self.partitions,
                'prophet': {'profile_iterations': self.profile_iterations,
                            'credit_mb': float(self.credit_mb)}}

    def warnings(self, jobs):
        if not jobs:
            return ['prophet orders DL jobs\' gradient sends: the '
                    'experiment has none, so it is fair sharing']
        short = [j['id'] for j in jobs
                 if j.get('iterations') is not None
                 and j['iterations'] <= self.profile_iterations]
        if short:
            return ['job %s: %s iterations or fewer, all profiled (sent in '
                    'ready order): Prophet never plans its sends'
                    % (', '.join(short), self.profile_iterations)]
        return []

    def decide(self, snap):
        return Decision()
