"""Geryon (INFOCOM 2020): urgency classes for parameter-server traffic."""
import numpy as np

from .base import Decision, Policy, urgency_class
from .registry import register

# what Geryon does with the sends of a job that is not parameter-server
NON_PS = ('last', 'urgency')


def _not_ps(snap, pending):
    """Per flow (or pending send), whether its job is known not to be a
    parameter-server job."""
    jobs = snap.jobs or {}
    cof = snap.pending_coflow if pending else snap.flow_coflow
    cj = snap.coflow_job
    if len(cj) != len(snap.coflow_id) or not len(cof):
        return np.zeros(len(cof), bool)
    other = [jobs[j].pattern not in (None, 'ps') if j in jobs else False
             for j in cj]
    return np.asarray(other, bool)[np.asarray(cof, np.int64)]


def _classes(snap, k, pending=False, non_ps='last'):
    """Per flow (or pending send), its urgency class out of ``k`` mapped
    onto the switches' Q classes; data of no model, and with ``non_ps``
    last the sends of a job that is not parameter-server, in the
    lowest."""
    q = 8 if snap.queues is None else snap.queues
    u = snap.urgency(pending)
    c = urgency_class(u, k)
    if k > q:                            # k classes onto q queues, in order
        c = c * q // k
    c = np.minimum(c, q - 1)
    last = np.isnan(u)
    if non_ps == 'last':
        last = last | _not_ps(snap, pending)
    return np.where(last, q - 1, c).astype(np.int64)


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
    slicing (the paper's baseline).

    Jobs that are not parameter-server (ring all-reduce, collectives):
    the paper schedules PS traffic only, so by default (``non_ps:
    last``) Geryon leaves them out of its classes: every send of theirs
    goes in the lowest class, Q - 1, with data of no model, as traffic a
    Geryon deployment does not mark. ``non_ps: urgency`` classes them per
    send by urgency like PS data, on their one connection (a starved
    bucket then holds the buckets behind it). A job whose pattern the
    backend does not know counts as PS."""
    name = 'geryon'
    params = {'classes': 4, 'slice_mb': 4.0, 'non_ps': 'last'}
    choices = {'non_ps': NON_PS}
    clairvoyant = True                 # class pending sends: hosts tag them
    decides_on = 'coflows'

    def workload(self):
        return {'ps_lanes': self.classes, 'slice_mb': self.slice_mb}

    def warnings(self, jobs):
        if any(j['pattern'] == 'ps' for j in jobs):
            return []
        if self.non_ps == 'last':
            return ['geryon schedules parameter-server traffic: no job here '
                    'is ps, so every send goes in the lowest class '
                    '(non_ps: last), as under fair sharing']
        return ['geryon schedules parameter-server traffic: no job here '
                'is ps, so there is no connection per class; ring '
                'buckets are classed per send on their one connection '
                '(non_ps: urgency)']

    def decide(self, snap):
        k, o = self.classes, self.non_ps
        return Decision(flow_class=_classes(snap, k, non_ps=o),
                        pending_class=_classes(snap, k, pending=True,
                                               non_ps=o))
