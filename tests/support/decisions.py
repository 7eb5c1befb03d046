"""What the policy tests share: comparing two decisions field by field."""
import numpy as np

FIELDS = ('coflow_rank', 'coflow_order', 'flow_rate', 'recheck_at',
          'flow_class', 'pending_class', 'job_shift')


def assert_same(d1, d2):
    """Two Decisions are equal in every field (arrays element-wise)."""
    for f in FIELDS:
        a, b = getattr(d1, f), getattr(d2, f)
        if a is None or b is None:
            assert a is None and b is None, f
        elif isinstance(a, dict):
            assert a == b, f
        else:
            assert np.array_equal(np.asarray(a), np.asarray(b)), f
