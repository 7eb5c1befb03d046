"""Fuzzing the coflow-trace reader (issue 27): valid traces with a token
or a line broken, garbled text, raw bytes, under the reader's options.
Every input gets coflows a run can use (finite times and sizes, racks
that exist, placed on hosts) or a ConfigError that names the file and,
for a line's fault, that line. ``@example`` lines: the cases the
fuzzing found."""
import math
import re

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from netsched.errors import ConfigError
from netsched.workload import trace
from tests.support.fuzzing import (fuzz, mangled, nothing_happens, outcome,
                                texts, write)

HOSTS = ['h0', 'h1', 'h2', 'h3']


@st.composite
def valid_trace(draw):
    """A trace in the coflow-benchmark format, as text."""
    ports = draw(st.integers(1, 6))
    rack = st.integers(0, ports - 1)
    lines = []
    ids = draw(st.lists(st.integers(0, 10 ** 6), min_size=1, max_size=6,
                        unique=True))
    for cid in ids:
        mappers = draw(st.lists(rack, min_size=1, max_size=3))
        reducers = draw(st.lists(st.tuples(rack, st.floats(
            0, 1e4, allow_nan=False)), min_size=1, max_size=3))
        lines.append('%d %d %d %s %d %s' % (
            cid, draw(st.integers(0, 10 ** 7)), len(mappers),
            ' '.join(map(str, mappers)), len(reducers),
            ' '.join('%d:%r' % r for r in reducers)))
    return '%d %d\n%s\n' % (ports, len(ids), '\n'.join(lines))


# a token a trace line may get instead of its own
tokens = st.one_of(texts, st.sampled_from(
    ['-1', '0', '99', '1:', ':1', '1:nan', '1:inf', '1:-0.5', '1:1e400',
     '1:1e308', '1e3', '10' * 200, '1' * 5000, '\u0663', '\u00b2', '1_0',
     '0x1', '\x0c', '\u2028', '\r', '\t', '\x00']),
    st.integers().map(str))


@st.composite
def broken_trace(draw):
    """A valid trace with one token, line or stretch of text broken."""
    text = draw(valid_trace())
    how = draw(st.sampled_from(['token', 'token', 'line', 'text']))
    if how == 'text':
        return draw(mangled(text))
    lines = text.split('\n')
    i = draw(st.integers(0, len(lines) - 1))
    if how == 'line':
        lines[i] = draw(st.one_of(texts, st.just(''), st.just(lines[0])))
    else:
        tok = lines[i].split(' ')
        tok[draw(st.integers(0, len(tok) - 1))] = draw(tokens)
        lines[i] = ' '.join(tok)
    return '\n'.join(lines)


options = st.fixed_dictionaries({
    'limit': st.one_of(st.none(), st.integers(1, 8)),
    'skip': st.integers(0, 3),
    # at most 1e3: a valid trace's arrivals (up to ~1e5 ms) stay within
    # the 1e8 s the simulator's clock holds (workload.bounds)
    'time_scale': st.floats(1e-6, 1e3),
    'size_scale': st.floats(1e-6, 1e6),
    'start_s': st.one_of(st.none(), st.floats(0, 1e6))})


def read(path, text, **kw):
    """The reader's result, checked, or its error, which names the file
    and, where it names a line, one the file has."""
    with nothing_happens():
        out = outcome(lambda: trace.read(path, **kw), path)
    if isinstance(out, ConfigError):
        m = re.match(re.escape(path) + r':(\d+):', str(out))
        if m and isinstance(text, str):
            assert 1 <= int(m.group(1)) <= text.count('\n') + 1, out
        return out
    ports, cofs = out
    assert 1 <= ports <= trace.MAX_PORTS
    arrivals = [c.arrival_s for c in cofs]
    assert arrivals == sorted(arrivals)
    for c in cofs:
        assert math.isfinite(c.arrival_s) and c.arrival_s >= 0
        assert all(0 <= r < ports for r in c.mappers)
        assert all(0 <= r < ports and math.isfinite(b) and b >= 0
                   for r, b in c.reducers)
    # what a run does with them next: racks on hosts, the network flows
    with nothing_happens():
        racks = trace.rack_hosts(ports, HOSTS, 'wrap')
        outcome(lambda: trace.rack_hosts(ports, HOSTS, 'strict', path),
                path)
        for c in cofs:
            _, _, size = trace.network_flows(c, racks)
            assert np.isfinite(size).all()
    return out


@fuzz
@given(text=broken_trace(), kw=options)
# \f ends a line for splitlines(): the errors named lines the file lacks
@example(text='4 2\n1 0 1 0 1 1:1\x0c\x0c\x0c\x0c\n2 0 1 x 1 1:1', kw={})
# arrival ms of 400 digits: OverflowError in the division by 1000
@example(text='4 1\n1 %s 1 0 1 1:1\n' % ('1' * 400), kw={})
# 1:1e308 MB: finite, but the bytes are not (inf after * 2**20)
@example(text='4 1\n1 0 1 0 1 1:1e308\n', kw={})
# a header of 10**18 ports: placing racks with wrap listed each one
@example(text='%d 1\n1 0 1 0 1 1:1\n' % 10 ** 18, kw={})
def test_broken_traces(tmp_path_factory, text, kw):
    path = write(tmp_path_factory.mktemp('t'), 'trace.txt', text)
    read(path, text, **kw)


@fuzz
@given(text=valid_trace(), kw=options)
def test_valid_traces_read_whole(tmp_path_factory, text, kw):
    path = write(tmp_path_factory.mktemp('t'), 'trace.txt', text)
    out = read(path, text, **kw)
    if kw['skip'] == 0 and kw['limit'] is None:
        assert not isinstance(out, ConfigError), out
        assert len(out[1]) == int(text.split()[1])


@fuzz
@given(content=st.one_of(st.binary(max_size=300), st.text(max_size=300),
                         valid_trace().flatmap(
                             lambda t: mangled(t.encode()))))
# a byte that is not UTF-8: UnicodeDecodeError
@example(content=b'4 1\n1 0 1 0 1 1:\xff\n')
def test_raw_trace_bytes(tmp_path_factory, content):
    path = write(tmp_path_factory.mktemp('t'), 'trace.txt', content)
    read(path, content)


def test_a_byte_that_is_not_utf8_is_named_by_its_line(tmp_path):
    # the bad byte is on the third line: two newlines come before it
    path = write(tmp_path, 'trace.txt',
                 b'4 2\n1 0 1 0 1 1:1\n2 0 1 \xff 1 1:1\n')
    with pytest.raises(ConfigError, match=re.escape(
            'trace %s:3: not UTF-8 text (byte 0xff)' % path)):
        trace.read(path)
