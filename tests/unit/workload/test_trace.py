"""The coflow-benchmark trace reader and the Facebook trace."""
import concurrent.futures
import multiprocessing
import os
import shutil

import pytest

from netsched.pipeline import experiment, run
from netsched.workload import trace
from netsched.errors import ConfigError


def _fb():
    """The Facebook trace where the loader finds it (tests/conftest.py
    sets NETSCHED_TRACE), or None."""
    try:
        return experiment.find_trace('FB2010-1Hr-150-0.txt', os.getcwd())
    except ConfigError:
        return None


FB = _fb()
# CI has the trace: there a missing one is a failure, not a skip
NO_TRACE = FB is None and os.environ.get('CI', '').lower() != 'true'


def write(tmp_path, text):
    p = tmp_path / 't.txt'
    p.write_text(text)
    return str(p)


def test_conventional_reading(tmp_path):
    p = write(tmp_path, '4 1\n7 1500 2 0 1 2 2:4.0 3:2.0\n')
    ports, cofs = trace.read(p)
    c = cofs[0]
    assert (ports, c.id, c.arrival_s) == (4, '7', 1.5)
    src, dst, size = c.flows()
    assert list(zip(src, dst, size)) == [
        (0, 2, 2 * trace.MB), (1, 2, 2 * trace.MB),
        (0, 3, 1 * trace.MB), (1, 3, 1 * trace.MB)]


@pytest.mark.parametrize('text,msg', [
    ('4 1\n1 0 1 0 2 2:3\n', r':2: says 2 reducers, lists 1'),
    ('4 1\n1 0 1 9 1 2:3\n', r':2: mapper rack must be in 0..3, got 9'),
    ('4 1\n1 0 1 0 1 2:-3\n', r':2: reducer 2: MB must be >= 0'),
    ('4 1\n1 0 1 0 1 2:x\n', r":2: reducer 2: MB 'x' is not a number"),
    ('4 1\n1 0 1 0 1 2\n', r":2: reducer '2' is not <rack>:<MB>"),
    ('4 1\n1 zero 1 0 1 2:1\n', r":2: arrival ms must be an integer"),
    ('4 2\n1 0 1 0 1 2:1\n', r':1: header says 2 coflows, the file has 1'),
    ('4\n', r':1: expected "<ports> <coflows>"'),
    ('4 2\n1 0 1 0 1 2:1\n1 5 1 0 1 2:1\n', r':3: coflow id 1 appears twice'),
])
def test_bad_lines_name_line_and_reason(tmp_path, text, msg):
    with pytest.raises(ConfigError, match=msg):
        trace.read(write(tmp_path, text))


@pytest.mark.skipif(NO_TRACE, reason='no Facebook trace (NETSCHED_TRACE)')
def test_facebook_trace_shape():
    ports, cofs = trace.read(FB)
    assert (ports, len(cofs)) == (150, 526)
    assert sum(len(c.mappers) * len(c.reducers) for c in cofs) == 706397
    assert max(len(c.mappers) * len(c.reducers) for c in cofs) == 21170


BASELINES = ('fair', 'fifo', 'varys', 'sebf', 'aalo', 'sincronia')


def _run_full_trace(policy, out):
    """One baseline on the whole trace (in a worker process)."""
    exp = experiment.load(_fb_yaml(), policy=policy, trace=FB)
    try:
        _, s = run.execute(exp, out, say=lambda m: None)
    finally:
        shutil.rmtree(out, ignore_errors=True)   # ~100 MB of events
    return {'coflows_done': s['totals']['coflows_done'],
            'avg_cct_s': s['totals']['avg_cct_s'],
            'flows': s['flows']['count'],
            'peak_util': max(r['peak_util'] for r in s['links'].values())}


@pytest.mark.slow          # about two minutes on both cores: make test, not unit
@pytest.mark.skipif(NO_TRACE, reason='no Facebook trace (NETSCHED_TRACE)')
def test_facebook_trace_completes_under_every_baseline(tmp_path):
    """All 526 coflows (every non-empty flow) finish under every baseline,
    no port is ever over capacity, and SEBF's average CCT is at least 2x
    better than per-flow fair's. The six runs share both cores."""
    _, cofs = trace.read(FB)
    nflows = sum(int((c.flows()[2] > 0).sum()) for c in cofs)
    ctx = multiprocessing.get_context('fork')
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as ex:
        futs = {p: ex.submit(_run_full_trace, p, str(tmp_path / p))
                for p in BASELINES}
        res = {p: f.result() for p, f in futs.items()}
    for p, r in res.items():
        assert r['coflows_done'] == 526, p
        assert r['flows'] == nflows, p
        assert r['peak_util'] <= 1.0 + 1e-6, p
    assert res['fair']['avg_cct_s'] >= 2.0 * res['sebf']['avg_cct_s'], res


def _fb_yaml():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                        '..', '..', 'experiments', 'fb-trace.yaml')


def test_a_trace_wider_than_the_topology_is_named(tmp_path):
    from netsched import cli
    p = write(tmp_path, '4 1\n1 0 1 0 1 3:1.0\n')
    e = tmp_path / 'e.yaml'
    e.write_text('backend: sim\ntopology: bigswitch,2\nbig_switch: true\n'
                 'trace: {path: %s}\n' % p)
    msg = r'e.yaml: trace: the trace has 4 ports but the topology only 2 ' \
        r'hosts'
    with pytest.raises(ConfigError, match=msg):
        run.execute(experiment.load(str(e)), str(tmp_path / 'o'),
                    say=lambda m: None)
    assert cli.main(['check', str(e)]) == 2


TRACE4 = ('4 3\n'
          '1 1000 2 0 1 1 2:4.0\n'        # 2 mappers -> rack 2
          '2 3000 1 3 1 0:1.0\n'          # rack 3 -> rack 0
          '3 5000 1 0 1 2:2.0\n')         # rack 0 -> rack 2


def test_skip_limit_and_size_scale(tmp_path):
    p = write(tmp_path, TRACE4)
    ports, cofs = trace.read(p, skip=1, limit=1, size_scale=3.0)
    # the second coflow only, its arrival now 0, its bytes x3
    assert [(c.id, c.arrival_s, c.bytes) for c in cofs] == [
        ('2', 0.0, 3 * trace.MB)]


def test_racks_on_hosts_strict_or_wrapped():
    hosts = ['a', 'b']
    assert trace.rack_hosts(4, hosts, 'wrap') == ['a', 'b', 'a', 'b']
    with pytest.raises(ConfigError, match='4 ports but the topology only 2'):
        trace.rack_hosts(4, hosts, 'strict')


def test_network_flows_leave_out_flows_within_a_host(tmp_path):
    _, cofs = trace.read(write(tmp_path, TRACE4))
    racks = trace.rack_hosts(4, ['a', 'b'], 'wrap')      # 0,2 -> a; 1,3 -> b
    src, dst, size = trace.network_flows(cofs[0], racks)
    # rack 0 -> rack 2 is a -> a: left out; rack 1 -> 2 is b -> a
    assert list(zip(src, dst, size)) == [('b', 'a', 2 * trace.MB)]
    # on a big switch every rack has a port: both go
    assert len(trace.network_flows(cofs[0], racks, big_switch=True)[2]) == 2


def _trace_exp(tmp_path, backend, **extra):
    p = write(tmp_path, TRACE4)
    d = {'backend': backend, 'topology': 'dumbbell,2', 'scale': 500,
         'trace': dict({'path': p, 'racks': 'wrap'}, **extra)}
    return experiment.from_dict(d, str(tmp_path / 'e.yaml'))


def test_the_emulator_runs_a_trace_as_sends_on_connections_of_their_own(
        tmp_path):
    from netsched.workload import taskgraph
    plan = taskgraph.build(_trace_exp(tmp_path, 'emu'))
    # dumbbell,2 hosts: hl0 hl1 hr0 hr1; racks 0..3 on them in order
    sends = [(t.coflow, t.host, t.dst, t.bytes, t.not_before,
              plan.conns[t.conn].sport) for t in plan.tasks]
    assert sends == [
        ('1', 'hl0', 'hr0', 2 * trace.MB, 1.0, trace.TRACE_SPORT),
        ('1', 'hl1', 'hr0', 2 * trace.MB, 1.0, trace.TRACE_SPORT + 1),
        ('2', 'hr1', 'hl0', 1 * trace.MB, 3.0, trace.TRACE_SPORT + 2),
        ('3', 'hl0', 'hr0', 2 * trace.MB, 5.0, trace.TRACE_SPORT + 3)]
    assert all(t.kind == 'send' and not t.deps for t in plan.tasks)
    assert plan.coflow_bytes == {'1': 4 * trace.MB, '2': trace.MB,
                                 '3': 2 * trace.MB}


def test_the_simulator_runs_the_same_flows_on_the_same_ports(tmp_path):
    exp = _trace_exp(tmp_path, 'sim')
    out, s = run.execute(exp, str(tmp_path / 'o'), say=lambda m: None)
    assert sorted(s['coflows']) == ['1', '2', '3']
    import csv
    with open(os.path.join(out, 'flows.csv')) as f:
        rows = list(csv.DictReader(f))
    assert [(r['coflow'], r['src'], r['dst']) for r in rows] == [
        ('1', 'hl0', 'hr0'), ('1', 'hl1', 'hr0'), ('2', 'hr1', 'hl0'),
        ('3', 'hl0', 'hr0')]


@pytest.mark.parametrize('extra,msg', [
    ({'racks': 'spread'}, r"trace: racks: must be one of strict, wrap"),
    ({'skip': -1}, r'trace: skip: must be >= 0'),
    ({'size_scale': 0}, r'trace: size_scale: must be > 0'),
])
def test_bad_trace_keys_are_named(tmp_path, extra, msg):
    with pytest.raises(ConfigError, match=msg):
        _trace_exp(tmp_path, 'sim', **extra)


# --- slices, rack mapping and the emulator's plan (both backends) --------

# 6 racks on dumbbell,2's 4 hosts (hl0 hl1 hr0 hr1) with racks: wrap:
# racks 0..3 on them in order, 4 on hl0, 5 on hl1
TRACE6 = ('6 4\n'
          '1 1000 2 0 1 1 2:4.0\n'      # hl0, hl1 -> hr0: 2 MB each
          '2 3000 1 4 1 0:1.0\n'        # rack 4 -> 0: hl0 -> hl0, no network
          '3 3500 2 5 3 1 2:2.0\n'      # hl1, hr1 -> hr0: 1 MB each
          '4 5000 1 0 1 5:2.0\n')       # hl0 -> hl1 (rack 5): 2 MB


def _exp6(tmp_path, backend='emu', **extra):
    p = tmp_path / 't6.txt'
    p.write_text(TRACE6)
    d = {'backend': backend, 'topology': 'dumbbell,2', 'scale': 500,
         'trace': dict({'path': str(p), 'racks': 'wrap'}, **extra)}
    return experiment.from_dict(d, str(tmp_path / 'e.yaml'))


def test_skip_then_limit_in_file_order_and_the_shift(tmp_path):
    p = write(tmp_path, TRACE6)
    # skip 0: the file's own times
    _, cofs = trace.read(p)
    assert [c.arrival_s for c in cofs] == [1.0, 3.0, 3.5, 5.0]
    # skip 1, limit 2: coflows 2 and 3, the first kept one at 0
    _, cofs = trace.read(p, skip=1, limit=2)
    assert [(c.id, c.arrival_s) for c in cofs] == [('2', 0.0), ('3', 0.5)]
    # start_s places the first kept coflow; time_scale stretches the gaps
    _, cofs = trace.read(p, skip=1, limit=2, time_scale=2.0, start_s=0.25)
    assert [(c.id, c.arrival_s) for c in cofs] == [('2', 0.25), ('3', 1.25)]
    # start_s without skip shifts too
    _, cofs = trace.read(p, start_s=0.0)
    assert [c.arrival_s for c in cofs] == [0.0, 2.0, 2.5, 4.0]
    # size_scale multiplies every reducer's bytes
    _, cofs = trace.read(p, size_scale=0.5)
    assert [c.bytes for c in cofs] == [2 * trace.MB, 0.5 * trace.MB,
                                       trace.MB, trace.MB]


def test_skip_past_the_end_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r'skip: 4 leaves no coflow '
                       r'\(the file has 4\)'):
        trace.read(write(tmp_path, TRACE6), skip=4)


def test_the_header_is_checked_with_skip_and_no_limit(tmp_path):
    with pytest.raises(ConfigError, match='header says 5 coflows, the '
                       'file has 4'):
        trace.read(write(tmp_path, TRACE6.replace('6 4', '6 5', 1)), skip=1)


def test_trace_keys_reach_the_spec(tmp_path):
    t = _exp6(tmp_path, 'sim', skip=1, limit=2, time_scale=0.5,
              size_scale=3, start_s=2, racks='strict').trace
    assert (t.skip, t.limit, t.time_scale, t.size_scale, t.start_s,
            t.racks) == (1, 2, 0.5, 3.0, 2.0, 'strict')
    t = _exp6(tmp_path, 'sim').trace
    assert (t.skip, t.limit, t.time_scale, t.size_scale, t.start_s,
            t.racks) == (0, None, 1.0, 1.0, None, 'wrap')


@pytest.mark.parametrize('extra,msg', [
    ({'start_s': -1}, r'trace: start_s: must be >= 0, got -1'),
    ({'start_s': 'soon'}, r"trace: start_s: must be a number, got 'soon'"),
    ({'skip': 1.5}, r'trace: skip: must be an integer, got 1.5'),
    ({'limit': 0}, r'trace: limit: must be >= 1, got 0'),
    ({'time_scale': -2}, r'trace: time_scale: must be >= 0, got -2'),
    ({'size_scale': 'big'}, r"trace: size_scale: must be a number, got "
                            r"'big'"),
    ({'racks': 'modulo'}, r"trace: racks: must be one of strict, wrap, got "
                          r"'modulo'"),
    ({'slice': 3}, r"trace: unknown key 'slice'"),
])
def test_bad_trace_values_name_key_and_value(tmp_path, extra, msg):
    with pytest.raises(ConfigError, match=msg):
        _exp6(tmp_path, 'sim', **extra)


def test_wrap_with_big_switch_and_big_switch_on_the_emulator_are_refused(
        tmp_path):
    p = write(tmp_path, TRACE6)
    d = {'backend': 'sim', 'topology': 'bigswitch,4', 'big_switch': True,
         'trace': {'path': p, 'racks': 'wrap'}}
    with pytest.raises(ConfigError, match=r"trace: racks: 'wrap' puts "
                       r"several racks on one host"):
        experiment.from_dict(d, str(tmp_path / 'e.yaml'))
    d['trace']['racks'] = 'strict'
    d['topology'] = 'bigswitch,6'
    experiment.from_dict(d, str(tmp_path / 'e.yaml'))          # fine
    with pytest.raises(ConfigError, match=r"big_switch: is the simulator's "
                       r"model"):
        experiment.from_dict(d, str(tmp_path / 'e.yaml'), backend='emu')


def test_the_emulator_plan_of_a_wrapped_slice(tmp_path):
    """Each network flow a send on a connection of its own (distinct
    source ports, the simulator's), released at its coflow's arrival, the
    trace's coflow ids; the same-host flow is left out and its coflow
    ends as it arrives."""
    from netsched.workload import taskgraph
    plan = taskgraph.build(_exp6(tmp_path, size_scale=2.0, skip=0,
                                 time_scale=0.5))
    MB = trace.MB
    got = [(t.kind, t.coflow, t.host, t.dst, t.bytes, t.not_before,
            t.deps, t.job, t.iter) for t in plan.tasks]
    assert got == [
        ('send', '1', 'hl0', 'hr0', 4 * MB, 0.5, [], None, None),
        ('send', '1', 'hl1', 'hr0', 4 * MB, 0.5, [], None, None),
        ('send', '3', 'hl1', 'hr0', 2 * MB, 1.75, [], None, None),
        ('send', '3', 'hr1', 'hr0', 2 * MB, 1.75, [], None, None),
        ('send', '4', 'hl0', 'hl1', 4 * MB, 2.5, [], None, None)]
    # one connection per send, from its own host to its own destination
    conns = [plan.conns[t.conn] for t in plan.tasks]
    assert len({c.id for c in conns}) == len(plan.conns) == 5
    assert [(c.src, c.dst, c.sport, c.dport) for c in conns] == [
        (t.host, t.dst, trace.TRACE_SPORT + k, taskgraph.AGENT_PORT)
        for k, t in enumerate(plan.tasks)]
    assert plan.coflow_bytes == {'1': 8 * MB, '2': 0.0, '3': 4 * MB,
                                 '4': 4 * MB}
    assert plan.instant_coflows == {'2': 1.5}
    assert plan.jobs == {} and plan.stages == []
    assert plan.hosts() == ['hl0', 'hl1', 'hr0', 'hr1']


def test_a_slice_with_nothing_across_the_network_is_refused_on_the_emulator(
        tmp_path):
    from netsched.workload import taskgraph
    with pytest.raises(ConfigError, match='no flow of the trace crosses '
                       'the network'):
        taskgraph.build(_exp6(tmp_path, skip=1, limit=1))


def _sim6(tmp_path, **extra):
    exp = _exp6(tmp_path, 'sim', **extra)
    out, s = run.execute(exp, str(tmp_path / 'sim'), say=lambda m: None)
    return exp, out, s


def test_the_simulator_runs_a_wrapped_slice(tmp_path):
    """dumbbell,2 at 10 Gbit/s: every coflow here is alone on its
    bottleneck (coflow 1: two 2 MB flows into hr0; 3: two 1 MB flows into
    hr0; 4: 2 MB hl0 -> hl1), so each CCT is its bytes over the link."""
    exp, out, s = _sim6(tmp_path)
    B = 10e9 / 8
    MB = trace.MB
    co = s['coflows']
    assert sorted(co) == ['1', '2', '3', '4']
    assert co['1']['cct_s'] == pytest.approx(4 * MB / B, rel=2e-3)
    assert co['2'] == {'arrival_s': 3.0, 'cct_s': 0.0, 'bytes': 0.0}
    assert co['3']['cct_s'] == pytest.approx(2 * MB / B, rel=2e-3)
    assert co['4']['cct_s'] == pytest.approx(2 * MB / B, rel=2e-3)
    assert [co[c]['bytes'] for c in '134'] == [4 * MB, 2 * MB, 2 * MB]
    assert [co[c]['arrival_s'] for c in '134'] == [1.0, 3.5, 5.0]
    assert s['flows']['count'] == 5


class _FakeFab:
    """What the coordinator reads of a fabric, for the event path only."""
    decision_log = None
    socket_path = policy = run_id = None
    queues, link_mbps, timings = 8, 20.0, {}

    def __init__(self, exp, d):
        self.g = exp.graph()
        self.state = type('S', (), {'dir': d})()


def test_the_emulators_events_give_the_simulators_coflow_records(
        tmp_path, monkeypatch):
    """The emulator's coordinator, fed the agents' messages (start and
    receive times) at the simulator's flow times, writes an event log
    whose summary has the same coflows as the simulator's: ids, arrivals,
    CCTs and bytes, the coflow without network flows included."""
    from netsched import events as evlog
    from netsched.pipeline import metrics
    from netsched.emulator import runner
    from netsched.events import EventLog
    from netsched.workload import taskgraph
    _, out, sim = _sim6(tmp_path)
    flows = [e for e in evlog.read(os.path.join(out, 'events.jsonl'))
             if e['ev'] == 'flow']
    exp = _exp6(tmp_path, 'emu')
    plan = taskgraph.build(exp)
    monkeypatch.setattr(runner, 'AgentPool', lambda hosts, path: None)
    log_path = str(tmp_path / 'emu-events.jsonl')
    with EventLog(log_path) as log:
        c = runner.Coordinator(exp, plan, _FakeFab(exp, str(tmp_path)), log,
                               say=lambda m: None)
        c.t0 = t0 = 1000.0
        sends = [t for t in plan.tasks if t.kind == 'send']
        sim_flow = {(f['src'], f['dst'], f['coflow']): f for f in flows}
        assert len(sends) == len(flows) == len(sim_flow)
        for t in sends:
            f = sim_flow[t.host, t.dst, t.coflow]
            c._on_start(t.host, {'task': t.id, 'ready': t0 + t.not_before,
                                 't': t0 + f['start']})
            c._on_recv(t.dst, {'task': t.id, 't': t0 + f['t']})
        c._log_open_coflows(10.0)
    emu = metrics.summarize(metrics.from_log(log_path), {})
    assert sorted(emu['coflows']) == sorted(sim['coflows'])
    for cid, rec in sim['coflows'].items():
        e = emu['coflows'][cid]
        assert e['bytes'] == rec['bytes'], cid
        assert e['arrival_s'] == pytest.approx(rec['arrival_s'], abs=1e-6)
        assert e['cct_s'] == pytest.approx(rec['cct_s'], abs=1e-6), cid
    rows = metrics.compare(sim, emu)
    assert [r[1] for r in rows if r[0] == 'coflow cct_s'] == ['1', '2', '3',
                                                              '4']
    assert all(r[4] is None or abs(r[4]) < 1e-6 for r in rows)


def test_check_accepts_a_trace_on_the_emulator_and_refuses_exact_queues(
        tmp_path, capsys):
    from netsched import cli
    p = tmp_path / 't6.txt'
    p.write_text(TRACE6)
    e = tmp_path / 'e.yaml'
    e.write_text('backend: emu\ntopology: dumbbell,2\nscale: 500\n'
                 'trace: {path: t6.txt, racks: wrap, size_scale: 4}\n')
    assert cli.main(['check', str(e)]) == 0
    text = capsys.readouterr().out
    assert '5 tasks, 5 connections' in text
    assert '5 flows cross the network' in text
    e.write_text(e.read_text() + 'queues: exact\n')
    assert cli.main(['check', str(e)]) == 2
    assert "queues: 'exact'" in capsys.readouterr().err


@pytest.mark.skipif(NO_TRACE, reason='no Facebook trace (NETSCHED_TRACE)')
def test_the_fidelity_trace_slice_checks_on_the_emulator(capsys):
    from netsched import cli
    path = os.path.join(os.path.dirname(_fb_yaml()), 'fidelity',
                        'trace-slice.yaml')
    assert cli.main(['check', path]) == 0
    out = capsys.readouterr().out
    assert '8 coflows' in out and '150 tasks, 150 connections' in out
