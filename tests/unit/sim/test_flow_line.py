"""The flow event's line has one layout (events.FLOW_LINE): the C writer
(sim/kernels.c), the Python writers (sim.engine, ns3.engine) and the log
reader (events.scan) follow it, so the C's lines and Python's are the
same text and read back as the same events."""
import json

import numpy as np
import pytest

from netsched import events
from netsched.events import FLOW_LINE
from netsched.sim import kernels

HOSTS = ['h0', 'h1', 'host-2']
QUOTED = [json.dumps(n) for n in ('a', 'job-1', 'x y')]


def _flows(rng, n):
    return (np.arange(n, dtype=np.int64) * 31,
            rng.integers(0, len(QUOTED), n).astype(np.int64),
            rng.integers(0, len(HOSTS), n).astype(np.int64),
            rng.integers(0, len(HOSTS), n).astype(np.int64),
            np.floor(rng.random(n) * 10.0 ** rng.integers(0, 12, n)) + 1,
            rng.random(n) * 10.0 ** rng.integers(-3, 5, n) + 1e-4)


def _python(head, ids, cof, src, dst, size, start, extra=None):
    extra = extra or [''] * len(ids)
    return ''.join(FLOW_LINE.line(head, i, QUOTED[c], HOSTS[s], HOSTS[d],
                                  repr(b), repr(round(st, 9)), x)
                   for i, c, s, d, b, st, x in zip(
                       ids.tolist(), cof.tolist(), src.tolist(),
                       dst.tolist(), size.tolist(), start.tolist(), extra))


def _scan(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    cols = [c for c, _, _ in events.scan(str(p)) if c is not None]
    assert len(cols) == 1               # read as columns, not by json
    c = cols[0]
    return [c.t, c.id, c.coflow, c.src, c.dst, c.bytes, c.start, c.ready,
            c.urgency]


def test_the_fields_in_order():
    head = FLOW_LINE.head(2.5)
    line = FLOW_LINE.line(head, 7, '"c"', 'h0', 'h1', '10.0', '0.5')
    assert list(json.loads(line)) == [k for k, _ in FLOW_LINE.FIELDS]
    assert json.loads(line) == {'t': 2.5, 'ev': 'flow', 'id': 7,
                                'coflow': 'c', 'src': 'h0', 'dst': 'h1',
                                'bytes': 10.0, 'start': 0.5}
    more = FLOW_LINE.line(head, 7, '"c"', 'h0', 'h1', '10.0', '0.5',
                          FLOW_LINE.extra(1.25, 3))
    assert list(json.loads(more)) == [k for k, _ in FLOW_LINE.FIELDS
                                      + FLOW_LINE.EXTRA]
    # scan finds a flow line by the schema's start and first key
    assert line.encode().startswith(events._HEAD)
    assert line.encode()[line.index(','):].startswith(events._MARK)


@pytest.mark.skipif(kernels.lib() is None,
                    reason='no compiled kernels: %s' % kernels.why_not())
def test_c_and_python_lines_are_one_text_and_read_the_same(tmp_path):
    rng = np.random.default_rng(3)
    head = FLOW_LINE.head(round(12.000000123, 9))
    flows = _flows(rng, 500)
    c = kernels.FlowText(HOSTS).lines(head, *flows, QUOTED)
    py = _python(head, *flows)
    assert c is not None and c == py
    got_c, got_py = _scan(tmp_path, 'c.jsonl', c), \
        _scan(tmp_path, 'py.jsonl', py)
    assert got_c == got_py
    # and as json reads them
    want = [json.loads(x) for x in py.splitlines()]
    for k, col in zip(('t', 'id', 'coflow', 'src', 'dst', 'bytes', 'start'),
                      got_c):
        assert col == [e[k] for e in want]


def test_extra_fields_read_as_json_reads_them(tmp_path):
    rng = np.random.default_rng(4)
    head = FLOW_LINE.head(3.0)
    flows = _flows(rng, 40)
    extra = [FLOW_LINE.extra(round(float(r), 9), int(u)) if u % 2 else ''
             for r, u in zip(rng.random(40), rng.integers(0, 9, 40))]
    text = _python(head, *flows, extra=extra)
    got = _scan(tmp_path, 'x.jsonl', text)
    want = [json.loads(x) for x in text.splitlines()]
    assert got[7] == [e.get('ready') for e in want]
    assert got[8] == [e.get('urgency') for e in want]
