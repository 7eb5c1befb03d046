"""Link utilisation in the simulator: the bytes each directed link
carried at the allocated rates, binned every ``sample_s`` into the same
``links`` events the emulator's port counters give, with per-link totals
and peaks."""
import json

import numpy as np

from . import kernels


class LinkMeter:
    def __init__(self, net, log, sample_s):
        self.net, self.log, self.sample_s = net, log, sample_s
        self._quoted = None
        L = len(net.capacity)
        self.bin_start = 0.0
        self.bin_bytes = np.zeros(L)
        self.link_bytes = np.zeros(L)
        self.peak_util = np.zeros(L)

    def advance(self, load_bps, t0, t):
        """The links carried ``load_bps`` from t0 to t."""
        w = self.sample_s
        # (count_nonzero: ndarray.any's Python wrapper costs more than
        # the test, at every event)
        if not np.count_nonzero(load_bps):
            if self.bin_bytes.any() and t >= self.bin_start + w:
                self._emit()
            if t >= self.bin_start + w:
                self.bin_start += w * np.floor((t - self.bin_start) / w)
            return
        while t >= self.bin_start + w:
            end = self.bin_start + w
            self.bin_bytes += load_bps * (end - t0) / 8.0
            t0 = end
            self._emit()
            self.bin_start = end
        if not kernels.add_bytes(load_bps, t - t0, self.bin_bytes):
            self.bin_bytes += load_bps * (t - t0) / 8.0

    def close(self, now):
        """The last, partial bin."""
        if self.bin_bytes.any():
            self._emit(max(now - self.bin_start, 1e-12))

    def _emit(self, dt=None):
        dt = dt or self.sample_s
        b = self.bin_bytes
        self.link_bytes += b
        nz = np.flatnonzero(b)
        if len(nz):
            util = b[nz] * 8.0 / (self.net.capacity[nz] * dt)
            self.peak_util[nz] = np.maximum(self.peak_util[nz], util)
            # the line EventLog.write would give, written directly: a
            # link's quoted name is made once, and repr is json's float
            q = self._quoted
            if q is None:
                q = self._quoted = [json.dumps(n) + ':' for n in
                                    self.net.names]
                self._text = kernels.UtilText(q)
            # compiled where it can (the same text), else by repr
            body = self._text.text(nz, util)
            if body is None:
                body = ','.join([q[i] + repr(round(u, 6)) for i, u in
                                 zip(nz.tolist(), util.tolist())])
            self.log.write_raw(
                '{"dt":%s,"util":{%s},"t":%s,"ev":"links"}\n' % (
                json.dumps(dt), body,
                repr(round(float(self.bin_start), 9))))
        self.bin_bytes = np.zeros_like(b)
