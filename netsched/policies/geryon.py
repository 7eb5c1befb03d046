"""Geryon (INFOCOM 2020): urgency classes for parameter-server traffic."""
import numpy as np

from .base import Decision, Policy, urgency_class
from .registry import register


def _classes(snap, k, pending=False):
    """Per flow (or pending send), its urgency class out of ``k`` mapped
    onto the switches' Q classes; data of no model in the lowest."""
    q = 8 if snap.queues is None else snap.queues
    u = snap.urgency(pending)
    c = urgency_class(u, k)
    if k > q:                            # k classes onto q queues, in order
        c = c * q // k
    c = np.minimum(c, q - 1)
    return np.where(np.isnan(u), q - 1, c).astype(np.int64)


@register
class Geryon(Policy):
    """Geryon (INFOCOM 2020): flows of different priorities carry
    parameters of different urgency, coordinated across several
    parameter servers fabric-wide (from the abstract).

    (reconstructed) Urgency follows the next forward pass: the front
    layers' parameters and gradients are needed first. A model's bytes,
    in forward order and after large tensors are sliced (``slice_mb``),
    are cut into ``classes`` urgency classes of equal bytes (class 0 the
    front; policies.urgency_class). Between every worker and every PS
    shard there is one connection per class each way (``workload()``),
    each with its class's DSCP, set as a rule at its ingress switch and by
    its sender, so every switch on every path serves the front layers
    first: several PS shards and jobs are coordinated simply by sharing
    the classes. With more classes than switch queues (Q), classes are
    merged in order (class c in queue c Q / classes). Data of no model
    (a trace's flows, urgency NaN) goes in the lowest class, Q - 1,
    behind all model data: not -1 (the coflow's class), since Geryon
    ranks no coflow and that would be class 0, the top, letting bulk
    traffic overtake the front layers. Static: decided per send, once
    (no recheck_at); no coflow order (Geryon orders data, not coflows).
    ``classes: 1`` is the single-class PS with the same partition and
    slicing (the paper's baseline)."""
    name = 'geryon'
    params = {'classes': 4, 'slice_mb': 4.0}
    clairvoyant = True                 # class pending sends: hosts tag them
    decides_on = 'coflows'

    def workload(self):
        return {'ps_lanes': self.classes, 'slice_mb': self.slice_mb}

    def warnings(self, jobs):
        if not any(j['pattern'] == 'ps' for j in jobs):
            return ['geryon schedules parameter-server traffic: no job here '
                    'is ps, so there is no connection per class; ring '
                    'buckets are classed per send on their one connection']
        return []

    def decide(self, snap):
        k = self.classes
        return Decision(flow_class=_classes(snap, k),
                        pending_class=_classes(snap, k, pending=True))
