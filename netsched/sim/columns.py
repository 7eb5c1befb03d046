"""Column arrays that grow by doubling: the simulator's record of every
flow ever started (path, coflow, hosts, size, start)."""
import numpy as np


class Columns:
    """Column arrays that grow by doubling (all flows ever started)."""

    def __init__(self, **dtypes):
        self.n = 0
        self.cols = {k: np.zeros(1024, dt) for k, dt in dtypes.items()}

    def append(self, **vals):
        k = len(next(iter(vals.values())))
        need = self.n + k
        if need > len(next(iter(self.cols.values()))):
            size = max(need, 2 * len(next(iter(self.cols.values()))))
            for name, a in self.cols.items():
                b = np.zeros(size, a.dtype)
                b[:self.n] = a[:self.n]
                self.cols[name] = b
        for name, v in vals.items():
            self.cols[name][self.n:need] = v
        ids = np.arange(self.n, need)
        self.n = need
        return ids

    def __getitem__(self, name):
        return self.cols[name]
