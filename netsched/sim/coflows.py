"""The simulator's coflow registry: one index per coflow name, and the
per-coflow arrays the engine keeps by that index (bytes sent, active
flows, the class the policy's ranks last mapped it to)."""
import numpy as np


class CoflowTable:
    """Coflows by engine index: name, job, arrival; arrays grow by at
    least 64 coflows at a time."""

    def __init__(self):
        self.names, self.jobs, self.arrival_s = [], [], []
        self._index = {}
        self.sent_bytes = np.zeros(64)                   # all flows so far
        self.active_flows = np.zeros(64, np.int64)
        self.queue_class = np.full(64, -1, np.int64)     # -1: none yet
        self.arrival = np.zeros(64)                      # arrival_s, array

    def index(self, name, arrival_s, job=None):
        """The index of coflow ``name``, registered on first sight."""
        c = self._index.get(name)
        if c is None:
            c = self._index[name] = len(self.names)
            self.names.append(name)
            self.jobs.append(job)
            self.arrival_s.append(arrival_s)
            if c >= len(self.sent_bytes):
                self._grow(max(64, c + 1))
            self.arrival[c] = arrival_s
        return c

    def _grow(self, n):
        self.sent_bytes = np.r_[self.sent_bytes, np.zeros(n)]
        self.active_flows = np.r_[self.active_flows, np.zeros(n, np.int64)]
        self.queue_class = np.r_[self.queue_class,
                                 np.full(n, -1, np.int64)]
        self.arrival = np.r_[self.arrival, np.zeros(n)]

    def live(self):
        """Indices of the coflows with active flows, in index order."""
        return np.flatnonzero(self.active_flows)
