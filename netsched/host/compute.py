"""A host's compute spans per iteration, as the ``iter`` event carries
them (``compute``: [[start, end], ...]) for timelines.

Both the emulator's agents and the plan driver the simulators share
record each compute task's span here and hand the iteration's spans,
merged where they touch, to the event that ends it. Merging keeps the
log small: a forward or backward pass of many layers is one span unless
the worker waited for data in between.
"""


class ComputeSpans:
    """(job, iteration) -> the spans of one host's compute tasks."""

    def __init__(self):
        self._spans = {}

    def add(self, key, start, end):
        if end > start:
            self._spans.setdefault(key, []).append((start, end))

    def pop(self, key, origin=0.0):
        """The merged spans of ``key`` (times less ``origin``, rounded as
        the log rounds), or None if it had none; forgets them."""
        spans = sorted(self._spans.pop(key, ()))
        out = []
        for a, b in spans:
            if out and a <= out[-1][1] + 1e-9:
                out[-1][1] = max(out[-1][1], b)
            else:
                out.append([a, b])
        return [[round(a - origin, 9), round(b - origin, 9)]
                for a, b in out] or None
