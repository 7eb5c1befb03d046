"""The JSON-lines event log every run writes as it goes.

One object per line, always with ``t`` (seconds since the run started,
data-center units) and ``ev``. The kinds, their fields, and which metric
reads them are listed in docs/experiment-format.md ("events.jsonl"). Both
backends write the same kinds, so metrics cannot tell them apart.
"""
import json
import math
import time

from .errors import ConfigError


class EventLog:
    """Append-only writer; flushed at least every ``flush_s`` of wall
    time so an interrupted run keeps what it measured."""

    def __init__(self, path, flush_s=1.0):
        self.path = path
        self._f = open(path, 'w')
        self._flush_s = flush_s
        self._last = time.monotonic()
        self.count = 0

    def write(self, t, ev, **fields):
        fields['t'] = round(float(t), 9)
        fields['ev'] = ev
        self._f.write(json.dumps(fields, separators=(',', ':')) + '\n')
        self.count += 1
        if self.count % 256 == 0:
            now = time.monotonic()
            if now - self._last >= self._flush_s:
                self._f.flush()
                self._last = now

    def write_raw(self, lines):
        """Pre-formatted JSON lines (bulk writers)."""
        self._f.write(lines)
        self.count += lines.count('\n')

    def flush(self):
        self._f.flush()

    def close(self):
        if not self._f.closed:
            self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read(path, cut=None):
    """All events of a log; a truncated last line (killed run) is
    skipped, and its line number appended to the list ``cut`` where one
    is given (so that a summary can say so); any other bad line is an
    error naming the line."""
    try:
        f = open(path)
    except OSError as e:
        raise ConfigError('%s: %s' % (path, e.strerror)) from None
    with f:
        lines = f.readlines()
    if lines and not lines[-1].endswith('\n'):
        last = lines.pop()                 # complete, or the killed run's
        try:
            json.loads(last)
            lines.append(last + '\n')
        except ValueError:
            if cut is not None:
                cut.append(len(lines) + 1)
    body = [x for x in lines if x.strip()]
    try:                                   # one parse for the whole log
        out = json.loads('[' + ','.join(body) + ']')
    except ValueError:
        out = None
    if out is not None and len(out) == len(body) and all(
            isinstance(e, dict) and 't' in e
                               and 'ev' in e for e in out):
        return out
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
        except ValueError:
            if n == len(lines) and not line.endswith('\n'):
                break
            raise ConfigError('%s:%d: not a JSON event' % (path, n)) from None
        if not isinstance(e, dict) or 't' not in e or 'ev' not in e:
            raise ConfigError('%s:%d: an event needs t and ev' % (path, n))
        out.append(e)
    return out


def finite(x):
    return x if x is not None and math.isfinite(x) else None
