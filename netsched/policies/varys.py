"""Varys (SIGCOMM 2014): Smallest-Effective-Bottleneck-First ordering and
MADD rates; SEBF alone as its own policy. Ports are directed links: on a
big-switch fabric exactly the host up- and downlinks of the paper; on a
multi-tier fabric every link a coflow crosses counts as a port."""
import numpy as np

from .base import Decision, Policy, arrival_order
from .registry import register


def effective_bottleneck(snap, load=None):
    """Varys' Gamma per coflow: max over ports of remaining bytes * 8 /
    port capacity, in seconds."""
    load = snap.coflow_port_bytes() if load is None else load
    return (load * 8.0 / snap.link_capacity).max(axis=1, initial=0.0)


def sebf_order(snap, load=None):
    gamma = effective_bottleneck(snap, load)
    pos = arrival_order(snap)
    idx = np.lexsort((pos, gamma))
    rank = np.empty(len(idx), dtype=np.int64)
    rank[idx] = np.arange(len(idx))
    return rank


def madd(snap, rank, load):
    """Minimum-allocation-for-desired-duration: in rank order, each coflow
    gets the rates that finish all its flows together at its Gamma on the
    capacity the coflows before it left; a coflow that meets a full port
    gets 0 (back-filling then gives it what is left)."""
    residual = snap.link_capacity.astype(float).copy()
    gamma = np.full(len(rank), np.inf)
    bits = load * 8.0
    for c in np.argsort(rank, kind='stable'):
        need = bits[c]
        used = need > 0
        if not used.any():
            continue
        if (residual[used] <= 0).any():
            continue
        g = (need[used] / residual[used]).max()
        gamma[c] = g
        residual[used] = np.maximum(residual[used] - need[used] / g, 0.0)
    with np.errstate(divide='ignore'):
        return snap.flow_remaining * 8.0 / gamma[snap.flow_coflow]


@register
class Varys(Policy):
    """Varys (SIGCOMM 2014): Smallest-Effective-Bottleneck-First order,
    MADD rates inside that order, back-filling of spare capacity
    (clairvoyant: needs every flow's remaining size)."""
    name = 'varys'
    clairvoyant = True
    decides_on = 'coflows'

    def decide(self, snap):
        load = snap.coflow_port_bytes()
        rank = sebf_order(snap, load)
        return Decision(coflow_rank=rank, flow_rate=madd(snap, rank, load))


@register
class Sebf(Varys):
    """SEBF ordering alone (no MADD rates): strict priority by Gamma."""
    name = 'sebf'

    def decide(self, snap):
        return Decision(coflow_rank=sebf_order(snap))
