"""Link utilisation on the emulator: the byte counters of every switch
port (the root namespace's view of the switches' interfaces) sampled
into ``links`` events."""
import time

import numpy as np

from .mininet_adapter import intf_name


class LinkSampler:
    """Byte counters of every switch port (the root namespace's view of
    the switches' interfaces) -> utilisation of each directed link."""

    def __init__(self, fab, sample_s):
        self.fab, self.sample_s = fab, sample_s
        g = fab.g
        self.counters = []          # (path, link name, emulated bit/s)
        for u, v, d in g.edges(data=True):
            for s, o in ((u, v), (v, u)):
                if g.nodes[s]['role'] == 'host':
                    continue
                base = '/sys/class/net/%s/statistics/' % intf_name(
                    s, d['ports'][s])
                rate = fab.rate_bps(u, v)
                self.counters.append((base + 'tx_bytes', '%s->%s' % (s, o),
                                      rate))
                if g.nodes[o]['role'] == 'host':
                    self.counters.append((base + 'rx_bytes',
                                          '%s->%s' % (o, s), rate))

    def _read(self):
        out = []
        for path, _, _ in self.counters:
            try:
                with open(path) as f:
                    out.append(int(f.read()))
            except OSError:
                out.append(0)
        return np.array(out, float)

    def start(self, t0):
        self.t0 = t0
        while time.monotonic() < t0:
            time.sleep(0.005)
        self.last_t = time.monotonic()
        self.last = self._read()

    def maybe_sample(self, log):
        if time.monotonic() - self.last_t >= self.sample_s:
            self.sample(log)

    def sample(self, log):
        now = time.monotonic()
        cur = self._read()
        dt = now - self.last_t
        if dt <= 0:
            return
        util = (cur - self.last) * 8.0 / (np.array(
            [r for _, _, r in self.counters]) * dt)
        nz = np.flatnonzero(util > 0)
        if len(nz):
            log.write(self.last_t - self.t0, 'links', dt=dt, util={
                self.counters[i][1]: round(float(util[i]), 6) for i in nz})
        self.last, self.last_t = cur, now
