"""Smallest remaining coflow first, with an age limit: the worked example
of docs/writing-a-policy.md, a policy kept outside the package.

Run it (from the repository's root):
  PYTHONPATH=docs/examples netsched run experiments/demo.yaml \
      --backend sim --policy smallest_remaining:SmallestRemaining:starve_s=2

A coflow is ranked by the bytes it has left, its flows' and its sends not
started yet, smallest first, so that short coflows finish early; one that
has waited ``starve_s`` since it arrived goes ahead of every younger one
(oldest first), so a large coflow cannot starve. Ties go by arrival.
"""
import numpy as np

from netsched.policies import Decision, Policy, arrival_order


class SmallestRemaining(Policy):
    """Smallest remaining coflow first; one older than starve_s first."""
    name = 'smallest-remaining'
    params = {'starve_s': 10.0}
    clairvoyant = True      # counts the sends not started yet
    progress = True         # bytes left in flight: the agents report them
    decides_on = 'coflows'  # the order changes as coflows come and go

    def decide(self, snap):
        C = len(snap.coflow_id)
        left = np.bincount(np.r_[snap.flow_coflow, snap.pending_coflow],
                           weights=np.r_[snap.flow_remaining,
                                         snap.pending_bytes], minlength=C)
        age = snap.t - snap.coflow_arrival
        old = age >= self.starve_s
        # the old by arrival, then the young by bytes left; ties by arrival
        key = np.where(old, snap.coflow_arrival, left)
        idx = np.lexsort((arrival_order(snap), key, ~old))
        rank = np.empty(C, dtype=np.int64)
        rank[idx] = np.arange(C)
        # ask again when the next young coflow comes of age
        due = snap.coflow_arrival[~old] + self.starve_s
        return Decision(coflow_rank=rank,
                        recheck_at=float(due.min()) if len(due) else None)
