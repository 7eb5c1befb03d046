"""Fuzzing the control channel (issue 27): the line decoder and the
controller core's handling of every request, fed valid requests with one
field broken (wrong types, missing keys, huge numbers, NaN, nested junk),
garbled bytes, lines that are not UTF-8 or very long, and random JSON.

Every line is decoded to an object or refused with a NetschedError;
every object gets a reply (none for a good report) and never an
exception. A refused message leaves the core as it was: its manual
rules, registrations, the scheduler's view and installed rules compared
field by field. After every message the core still serves: `status`
answers, and its next step runs. ``@example`` lines: the cases the
fuzzing found."""
import dataclasses
import json
import math

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from netsched import circuits, policies
from netsched import topology as topo
from netsched.control import channel
from netsched.control.core import ControllerCore
from netsched.errors import NetschedError
from tests.support.fuzzing import (fuzz, json_junk, mangled, mutated,
                                nothing_happens)

DUMBBELL = topo.parse_spec('dumbbell,2')
HYBRID = topo.hybrid(4, 1, circuits=1, reconfig_ms=10)


def conn(cid, sport, dst_ip):
    return {'id': cid, 'sport': sport, 'dport': 5000, 'dst_ip': dst_ip}


def send(sid, coflow, dst, iteration, nbytes=1e6):
    return {'id': sid, 'coflow': coflow, 'job': coflow.split('/')[0],
            'bytes': nbytes, 'conn': 1, 'dst': dst, 'iter': iteration,
            'urgency': 0.5, 'position': float(sid)}


def job(bytes_per_iteration):
    return {'iterations': 2, 'bytes_per_iteration': bytes_per_iteration,
            'group': None, 'stage_ends': [], 'compute_s': 0.01,
            'first_send_s': 0.0}


# what the agents of two jobs register (dumbbell,2: hl* -> hr*)
REGISTER = [
    {'op': 'register', 'host': 'hl0', 'run': 'r1',
     'conns': [conn(1, 40001, '10.0.1.2')],
     'sends': [send(1, 'a/0', 'hr0', 0), send(2, 'a/1', 'hr0', 1)],
     'jobs': {'a': job(1e6)}},
    {'op': 'register', 'host': 'hl1', 'run': 'r1',
     'conns': [conn(1, 40002, '10.0.1.3')],
     'sends': [send(3, 'b/0', 'hr1', 0, 4e6), send(4, 'b/1', 'hr1', 1, 4e6)],
     'jobs': {'b': job(4e6)}}]
# valid requests of every op, the fuzzers' starting points
REQUESTS = [
    {'op': 'status'}, {'op': 'rules'}, {'op': 'decision'},
    {'op': 'set_class', 'match': {'ipv4_src': '10.0.0.2', 'tcp_dst': 5000},
     'cls': 2, 'priority': 200},
    {'op': 'clear_class', 'id': 1}, {'op': 'clear_class'},
    {'op': 'start', 't0': 1.0},
    {'op': 'circuits', 'pairs': [['t0', 't1']]},
    {'op': 'register', 'host': 'hr0', 'run': 'r1',
     'conns': [conn(1, 40003, '10.0.0.2')],
     'sends': [send(5, 'c/0', 'hl0', 0)], 'jobs': {'c': job(1e6)}},
    dict(REGISTER[0], run='r2'),
    # a re-registration (the controller restarted) with its progress
    dict(REGISTER[0], started=[[1, 0.01], [2, 0.02]], done=[3],
         marks=[{'job': 'a', 'iter': 0, 't': 0.03, 'loss': 2.0}]),
    {'op': 'report', 'host': 'hl0', 'events': [
        {'ev': 'start', 'task': 2, 'ready': 0.02, 't': 0.021},
        {'ev': 'recv', 'task': 1, 't': 0.03},
        {'ev': 'mark', 'job': 'a', 'iter': 0, 't': 0.03, 'loss': 2.5},
        {'ev': 'progress', 't': 0.04, 'sent': {'2': 5e5}}]},
    {'op': 'report', 'host': 'hl1', 'events': [
        {'ev': 'progress', 't': 0.04, 'sent': {'3': 1e6}},
        {'ev': 'recv', 'task': 3, 't': 0.05}]},
]


def make_core(fabric, policy):
    """A core with state to lose: switches up, two agents registered, a
    manual rule, a transfer under way and a decision taken."""
    if fabric == 'hybrid':
        c = ControllerCore(HYBRID, 8, policies.make(policy), scale=500.0,
                           circuits=circuits.make('matching', {}))
    else:
        c = ControllerCore(DUMBBELL, 8, policies.make(policy), scale=500.0)
    for dpid in sorted(c.switch_of):
        c.on_connect(dpid)
        c.on_ready(dpid)
    if fabric != 'hybrid':
        for r in REGISTER:
            assert c.handle(r, 0.0).reply['ok']
        assert c.handle({'op': 'report', 'host': 'hl1', 'events': [
            {'ev': 'start', 'task': 3, 'ready': 0.01, 't': 0.01}]},
            0.01).reply is None
    assert c.handle({'op': 'set_class', 'match': {'ipv4_dst': '10.0.1.2'},
                     'cls': 1}).reply['ok']
    c.step(0.012)
    return c


cores = st.tuples(st.sampled_from(['dumbbell'] * 3 + ['hybrid']),
                  st.sampled_from(['sebf', 'aalo', 'fair', 'cassini']))

# ------------------------------------------------------------- state

SKIP = {'g', 'net', 'policy', 'sched', 'by_ip', 'ingress', 'switch_of',
        'load', 'graph'}


def canon(x):
    """A value as text that equal states share (sets and dicts sorted,
    NaN equal to itself, objects by their fields)."""
    if isinstance(x, float):
        return 'nan' if x != x else repr(x)
    if isinstance(x, np.ndarray):
        return 'array' + canon(x.tolist())
    if isinstance(x, dict):
        return '{%s}' % ','.join(sorted('%s:%s' % (canon(k), canon(v))
                                        for k, v in x.items()))
    if isinstance(x, (set, frozenset)):
        return '{%s}' % ','.join(sorted(canon(v) for v in x))
    if isinstance(x, (list, tuple)):
        return '[%s]' % ','.join(canon(v) for v in x)
    if dataclasses.is_dataclass(x) or hasattr(x, '__dict__') and \
            type(x).__module__.startswith('netsched.control'):
        return type(x).__name__ + canon({k: v for k, v in vars(x).items()
                                         if k not in SKIP})
    return repr(x)


def state(c):
    """What a request may change in the core (module docstring)."""
    return canon(c)


def sane(c):
    """What the core took must be numbers it can compute with."""
    fin = lambda x: x is None or math.isfinite(x)    # noqa: E731
    if c.scheduler is not None:
        d = c.scheduler.demand
        for t in d.sends.values():
            assert fin(t.bytes) and t.bytes >= 0 and fin(t.ready), t
            assert isinstance(t.coflow, str) and isinstance(t.job, str), t
        for m in d.job_meta.values():
            assert fin(m['bytes_per_iteration']) and fin(m['compute_s']) \
                and fin(m['first_send_s']), m
        for j in d.jobs.values():
            assert fin(j.get('t')), j
    if c.circuits is not None:
        assert fin(c.circuits.next_at)


# ---------------------------------------------------------- messages

def lines():
    """A line from the channel: a request of REQUESTS with a field
    broken, garbled or not; random JSON; raw bytes; long and deep lines."""
    template = mutated(REQUESTS, values=json_junk,
                       key_names=st.text(max_size=8))
    encoded = st.one_of(template, json_junk).map(
        lambda v: channel.encode(v).rstrip(b'\n'))
    return st.one_of(
        encoded, encoded, encoded,
        encoded.flatmap(lambda b: mangled(b)),
        st.binary(max_size=200),
        st.text(max_size=200).map(
            lambda t: t.encode('utf-8', 'surrogatepass')),
        st.sampled_from([b'[' * 100000, b'{"op": ' * 50000,
                         b'{"op": "status", "x": "%s"}' % (b'y' * 10 ** 6),
                         b'1' * 5000, b'\xff\xfe\x00', b'', b'\n',
                         b'{"op": NaN}', b'{"op": "status"} trailing']))


def serve(c, line, now):
    """One line as the app serves it (decode, handle), checked: the
    reply, and the state unchanged when the message was refused."""
    before = state(c)
    try:
        req = channel.decode(line)
    except NetschedError as e:
        assert str(e).startswith('bad request: '), e
        assert state(c) == before
        return None
    assert isinstance(req, dict)
    with nothing_happens():
        out = c.handle(req, now)
    reply = out.reply
    if reply is None:                 # a report that was taken
        assert req.get('op') == 'report'
    else:
        assert reply['ok'] in (True, False)
        # the app writes the reply back on the channel
        assert channel.decode(channel.encode(reply)) is not None
    if reply is None or reply['ok']:
        sane(c)
    else:
        assert isinstance(reply['error'], str) and reply['error'], reply
        assert not out.mods and not out.pushes, out
        assert state(c) == before, 'a refused %r changed the core' % (
            req.get('op'),)
    # it keeps serving: a status answers and time passes
    assert c.handle({'op': 'status'}, now).reply['ok']
    c.step(now + 0.005)
    return reply


def template_line(req):
    return channel.encode(req).rstrip(b'\n')


def report(*events, host='hl0'):
    return template_line({'op': 'report', 'host': host,
                          'events': list(events)})


@fuzz
@given(core=cores, line=lines())
# a list nested 100000 deep: RecursionError from the JSON decoder
@example(core=('dumbbell', 'sebf'), line=b'[' * 100000)
# clear_class with a list for an id: TypeError (unhashable) in `in rules`
@example(core=('dumbbell', 'sebf'),
         line=template_line({'op': 'clear_class', 'id': [1]}))
# a connection that is not a mapping: AttributeError in register
@example(core=('dumbbell', 'sebf'),
         line=template_line(dict(REQUESTS[8], conns=[1])))
# a connection without its sport: KeyError in register
@example(core=('dumbbell', 'sebf'), line=template_line(dict(
    REQUESTS[8], conns=[{'id': 1, 'dport': 1, 'dst_ip': '10.0.0.2'}])))
# a send of 1e400 bytes (inf after JSON) was taken
@example(core=('dumbbell', 'sebf'), line=template_line(dict(
    REQUESTS[8], sends=[send(5, 'c/0', 'hl0', 0, float('inf'))])))
# a bad registration for a new run had already forgotten the previous run
@example(core=('dumbbell', 'sebf'), line=template_line(dict(
    REGISTER[0], run='r2', sends=[dict(send(1, 'a/0', 'hr0', 0),
                                       conn=9)])))
# a report whose second event is bad: the first had been applied
@example(core=('dumbbell', 'sebf'), line=report(
    {'ev': 'recv', 'task': 3, 't': 0.05}, {'ev': 'recv', 'task': 99}))
# a mark with a list for a job: TypeError (unhashable)
@example(core=('dumbbell', 'cassini'), line=report(
    {'ev': 'mark', 'job': ['a'], 'iter': 0, 't': 0.1}))
# a start whose ready time is NaN was taken
@example(core=('dumbbell', 'sebf'), line=report(
    {'ev': 'start', 'task': 2, 'ready': float('nan')}))
# a host given as a list: TypeError (unhashable) looking it up
@example(core=('dumbbell', 'sebf'),
         line=b'{"op": "register", "host": ["hl0"], "run": "r1"}')
# start with t0 Infinity was taken: the circuits never decided again
@example(core=('hybrid', 'fair'), line=b'{"op": "start", "t0": Infinity}')
def test_one_line(core, line):
    c = make_core(*core)
    serve(c, line, 0.1)


@fuzz
@given(core=cores, batch=st.lists(lines(), min_size=2, max_size=6))
def test_a_series_of_lines(core, batch):
    # valid requests change the state; each bad one in between must not
    c = make_core(*core)
    for i, line in enumerate(batch):
        serve(c, line, 0.1 + 0.01 * i)


@fuzz
@given(line=st.one_of(st.binary(max_size=300), lines()))
def test_decode_alone(line):
    try:
        obj = channel.decode(line)
    except NetschedError as e:
        assert str(e).startswith('bad request: ')
    else:
        assert isinstance(obj, dict)
        assert json.loads(channel.encode(obj)) is not None
