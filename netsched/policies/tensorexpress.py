"""TensorExpress (IEEE CLOUD 2020): tensor packets scheduled in-network."""
import numpy as np

from ..errors import ConfigError
from .base import Decision, Policy, urgency_class
from .registry import NO, YES, register


def _tags(snap, k, pending=False):
    """Per flow (or pending send): its tensor's consumption position
    quantised onto k classes; data of no model in the lowest."""
    q = 8 if snap.queues is None else snap.queues
    pos = snap.position(pending)
    return np.where(np.isnan(pos), q - 1,
                    urgency_class(pos, k)).astype(np.int64)


@register
class TensorExpress(Policy):
    """TensorExpress (CLOUD 2020): host-side reordering leaves contention
    inside the network, so tensor packets are scheduled in the switches
    by priority over several queues (from the 3-page paper).

    (reconstructed) Every send of a tensor gets a priority from the
    tensor's consumption order in the next forward pass (its position:
    tensor index over the model's tensors; a large tensor consumed late,
    like VGG's fc6, is late whatever its bytes), quantised onto
    ``classes`` queues (at most Q) in equal steps, cluster-wide: the
    front of every job's model is class 0, whichever job it belongs to,
    so urgent tensors of any job overtake bulk ones at every hop. The
    host tags every packet of the send with its class's DSCP (per send,
    on the job's own connections); every switch queues by the tag in
    strict priority. It extends the hosts' own ordering, which it says
    is not enough on its own: the hosts send tensors in slices of at
    most ``slice_mb`` and each connection its waiting slices in the same
    priority order (as the ``p3`` baseline does with fair links), so the
    comparison with ``p3`` is the in-network part alone. Differences
    from Geryon: per tensor on the job's existing connections instead of
    a connection per urgency class, by consumption order rather than
    bytes, finer (8 classes by default). Data of no model (position
    NaN) goes in the lowest class, Q - 1, behind every tensor, even when
    ``classes`` < Q (as in Geryon: -1 would be the coflow's class, the
    top one, as no coflow is ranked). Static per send (no recheck_at),
    no coflow order.

    ``host_order: false`` is the ablation "in-network priority without
    host ordering": every send keeps its tag and the switches their
    strict priority, but each connection sends its slices in the order
    they became ready (``send_order: ready``), so whatever TensorExpress
    gains over it is the hosts' ordering, and over ``p3`` the network's.

    ``lanes: true`` gives a parameter-server job a connection per class
    between every worker and shard, each way (as Geryon's, but cut by
    consumption position, so each carries one tag): a slice starved in a
    low class then holds no other class's slices behind it on its
    connection, nor does a connection carry packets of several classes
    (which the emulator's switches reorder). It measures what the one
    shared connection costs TensorExpress (docs/reproduction.md).
    """
    name = 'tensorexpress'
    params = {'classes': 8, 'slice_mb': 4.0, 'host_order': True,
              'lanes': False}
    clairvoyant = True                 # class pending sends: hosts tag them
    decides_on = 'coflows'

    def __init__(self, **params):
        super().__init__(**params)
        self.host_order = _boolean('host_order', self.host_order)
        self.lanes = _boolean('lanes', self.lanes)

    def workload(self):
        out = {'send_order': 'priority' if self.host_order else 'ready',
               'slice_mb': self.slice_mb}
        if self.lanes:
            out.update(ps_lanes=int(self.classes), lanes_by='position')
        return out

    def decide(self, snap):
        q = 8 if snap.queues is None else snap.queues
        k = min(self.classes, q)
        return Decision(flow_class=_tags(snap, k),
                        pending_class=_tags(snap, k, pending=True))


def _boolean(key, v):
    """A yes/no parameter, spelt as registry.make accepts it (a YAML
    boolean, or true/false, yes/no, on/off, 1/0), so that a class made
    directly agrees with one made by name."""
    if isinstance(v, bool):
        return v
    text = str(v).strip().lower()
    if isinstance(v, (int, float, str)) and text in YES + NO:
        return text in YES
    raise ConfigError('tensorexpress: %s must be true or false, got %r'
                      % (key, v))
