"""A host's compute spans per iteration (host.compute): merged where they
touch, kept apart where the worker waited, rounded as the log rounds."""
from netsched.host.compute import ComputeSpans


def test_touching_spans_merge_and_gaps_stay():
    c = ComputeSpans()
    for a, b in ((0.0, 1.0), (1.0, 1.5), (2.0, 3.0), (1.5 + 1e-12, 1.75)):
        c.add(('j', 0), a, b)
    c.add(('j', 1), 5.0, 6.0)
    assert c.pop(('j', 0)) == [[0.0, 1.75], [2.0, 3.0]]
    assert c.pop(('j', 0)) is None             # forgotten once taken
    assert c.pop(('j', 1), origin=5.0) == [[0.0, 1.0]]


def test_empty_spans_are_not_kept():
    c = ComputeSpans()
    c.add(('j', 0), 1.0, 1.0)
    assert c.pop(('j', 0)) is None
