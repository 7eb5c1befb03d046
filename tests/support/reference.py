"""An independent max-min filler (link-by-flow incidence matrix, one
round per bottleneck level): the reference netsched.fluid is checked
against."""
import numpy as np


def max_min(flow_links, capacity):
    """flow_links: one iterable of link keys per flow; capacity: dict
    link key -> rate. Returns a numpy array of per-flow rates: every flow
    grows at the same pace until a link it crosses is full."""
    links = sorted({l for fl in flow_links for l in fl}, key=str)
    if not flow_links:
        return np.zeros(0)
    index = {l: i for i, l in enumerate(links)}
    inc = np.zeros((len(links), len(flow_links)), dtype=bool)
    for f, fl in enumerate(flow_links):
        for l in fl:
            inc[index[l], f] = True
    left = np.array([float(capacity[l]) for l in links])
    rate = np.zeros(len(flow_links))
    active = inc.any(axis=0)
    while active.any():
        n = inc[:, active].sum(axis=1)
        with np.errstate(divide='ignore', invalid='ignore'):
            share = np.where(n > 0, left / np.maximum(n, 1), np.inf)
        step = share.min()
        rate[active] += step
        left -= step * n
        full = (n > 0) & (left <= 1e-9 * np.maximum(1.0, share))
        frozen = inc[full].any(axis=0)
        active &= ~frozen
    return rate
