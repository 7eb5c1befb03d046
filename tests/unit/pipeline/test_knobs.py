"""The measuring knobs as experiment keys (pipeline.knobs): checked with
the file, settable with --set, overridden (loudly) by the environment,
recorded, and carried to where they act -- the simulator's rate setter
and driver, the controller's scheduler (the fabric description), the
agents' plan and the hosts' set-up commands (no emulator is run)."""
import dataclasses
import json
import os
import subprocess
import sys

import pytest

from netsched.errors import ConfigError
from netsched.pipeline import experiment, knobs, run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
# MB as the coflow-benchmark trace counts it; a link of 100 of them per s
MB = 2 ** 20
LINK_BPS = 8 * MB * 100


def base(**blocks):
    d = {'topology': 'dumbbell,1', 'backend': 'sim',
         'jobs': [dict(model='resnet50', pattern='ring', workers=2,
                       iterations=1, compute_scale=0)]}
    d.update(blocks)
    return d


def load(d, environ=None):
    return experiment.from_dict(d, 'exp.yaml', environ=environ or {})


def test_no_blocks_no_change():
    k = load(base()).knobs
    assert k == knobs.Knobs() and k.changed() == []
    assert k.record() == {
        'emulator': {'tcp': {'congestion_control': None, 'rto_min_ms': None,
                             'initcwnd': None, 'cwnd_clamp': None},
                     'host_sysctl': {}, 'drain': True},
        'scheduler': {'floor_release': False, 'hold_starved': False},
        'simulator': {'send_jitter_ms': 0.0, 'send_jitter_seed': 0},
        'from_environment': {}}


def test_every_key_is_read():
    k = load(base(
        emulator={'tcp': {'congestion_control': 'cubic', 'rto_min_ms': 3000,
                          'initcwnd': 2, 'cwnd_clamp': 6},
                  'host_sysctl': {'net.ipv4.tcp_recovery': 0,
                                  'net.ipv4.tcp_early_retrans': 0},
                  'drain': False},
        scheduler={'floor_release': True, 'hold_starved': True},
        simulator={'send_jitter_ms': 1.5, 'send_jitter_seed': 4})).knobs
    assert (k.congestion_control, k.rto_min_ms, k.initcwnd,
            k.cwnd_clamp) == ('cubic', 3000, 2, 6)
    # sorted by key; values as the sysctl command gets them
    assert k.host_sysctl == (('net.ipv4.tcp_early_retrans', '0'),
                             ('net.ipv4.tcp_recovery', '0'))
    assert (k.drain, k.floor_release, k.hold_starved) == (False, True, True)
    assert (k.send_jitter_ms, k.send_jitter_seed) == (1.5, 4)
    assert k.scheduler() == {'floor_release': True, 'hold_starved': True}
    assert len(k.changed()) == 10 and 'emulator.drain=false' in k.changed()
    assert k.host_tcp() == {'rto_min_ms': 3000, 'initcwnd': 2,
                            'cwnd_clamp': 6, 'sysctl': k.host_sysctl}


@pytest.mark.parametrize('blocks, msg', [
    ({'emulator': {'tcp': {'rto_min_ms': 'x'}}},
     "exp.yaml: emulator: tcp: rto_min_ms: must be an integer, got 'x'"),
    ({'emulator': {'tcp': {'rto_min_ms': 0}}},
     'exp.yaml: emulator: tcp: rto_min_ms: must be >= 1, got 0'),
    ({'emulator': {'tcp': {'rto_min_ms': 200000}}},
     'emulator: tcp: rto_min_ms: must be <= 120000, got 200000'),
    ({'emulator': {'tcp': {'initcwnd': 2.5}}},
     'emulator: tcp: initcwnd: must be an integer, got 2.5'),
    ({'emulator': {'tcp': {'cwnd_clamp': -6}}},
     'emulator: tcp: cwnd_clamp: must be >= 1, got -6'),
    ({'emulator': {'tcp': {'congestion_control': 'cubic; reboot'}}},
     "emulator: tcp: congestion_control: must be the name of a kernel "
     "congestion control"),
    ({'emulator': {'tcp': {'cc': 'cubic'}}},
     "exp.yaml: emulator: tcp: unknown key 'cc'"),
    ({'emulator': {'host_sysctl': {'vm.swappiness': 10}}},
     "emulator: host_sysctl: 'vm.swappiness': only per-network-namespace"),
    ({'emulator': {'host_sysctl': {'net.ipv4.tcp_recovery': '0; rm x'}}},
     'emulator: host_sysctl: net.ipv4.tcp_recovery: must be a number or '
     'words'),
    ({'emulator': {'host_sysctl': ['net.ipv4.tcp_recovery=0']}},
     'emulator: host_sysctl: must map sysctl keys to values'),
    ({'emulator': {'drain': 'no'}},
     "exp.yaml: emulator: drain: must be true or false, got 'no'"),
    ({'emulator': 'fast'}, "exp.yaml: emulator: must be a mapping"),
    ({'scheduler': {'floor_release': 1}},
     'exp.yaml: scheduler: floor_release: must be true or false, got 1'),
    ({'scheduler': {'hold': True}}, "exp.yaml: scheduler: unknown key "
     "'hold' (known: floor_release, hold_starved)"),
    ({'simulator': {'send_jitter_ms': -1}},
     'exp.yaml: simulator: send_jitter_ms: must be >= 0, got -1'),
    ({'simulator': {'send_jitter_seed': 1.5}},
     'exp.yaml: simulator: send_jitter_seed: must be an integer, got 1.5'),
])
def test_bad_knobs_name_file_key_and_value(blocks, msg):
    with pytest.raises(ConfigError) as e:
        load(base(**blocks))
    assert msg in str(e.value)


def test_check_names_the_bad_knob_without_a_traceback(tmp_path):
    p = tmp_path / 'exp.yaml'
    p.write_text('topology: dumbbell,1\nbackend: sim\n'
                 'jobs: [{model: resnet50, pattern: ring, workers: 2, '
                 'iterations: 1}]\nemulator: {tcp: {initcwnd: many}}\n')
    r = subprocess.run([sys.executable, '-m', 'netsched', 'check', str(p)],
                       capture_output=True, text=True, cwd=ROOT,
                       env={k: v for k, v in os.environ.items()
                            if not k.startswith('NETSCHED_')})
    assert r.returncode != 0 and 'Traceback' not in r.stderr
    assert "%s: emulator: tcp: initcwnd: must be an integer, got 'many'" \
        % p in r.stderr


def test_set_reaches_every_block(tmp_path):
    p = tmp_path / 'exp.yaml'
    p.write_text(json.dumps(base()))
    exp = experiment.load(str(p), sets=[
        (('emulator', 'tcp', 'rto_min_ms'), 3000),
        (('emulator', 'host_sysctl'), {'net.ipv4.tcp_early_retrans': 0}),
        (('scheduler', 'hold_starved'), True),
        (('simulator', 'send_jitter_ms'), 2)])
    k = exp.knobs
    assert (k.rto_min_ms, k.host_sysctl, k.hold_starved,
            k.send_jitter_ms) == (3000, (('net.ipv4.tcp_early_retrans',
                                          '0'),), True, 2.0)
    with pytest.raises(ConfigError, match=r'with --set '
                       r'emulator.tcp.initcwnd=0'):
        experiment.load(str(p), sets=[(('emulator', 'tcp', 'initcwnd'), 0)])


@pytest.mark.parametrize('var, text, want', [
    ('NETSCHED_CC', 'cubic', {'congestion_control': 'cubic'}),
    ('NETSCHED_RTO_MIN_MS', '3000', {'rto_min_ms': 3000}),
    ('NETSCHED_INITCWND', '2', {'initcwnd': 2}),
    ('NETSCHED_CWND_CLAMP', '6', {'cwnd_clamp': 6}),
    ('NETSCHED_HOST_SYSCTL',
     'net.ipv4.tcp_early_retrans=0 net.ipv4.tcp_recovery=0',
     {'host_sysctl': (('net.ipv4.tcp_early_retrans', '0'),
                      ('net.ipv4.tcp_recovery', '0'))}),
    ('NETSCHED_DRAIN', '0', {'drain': False}),
    ('NETSCHED_DRAIN', '1', {'drain': True}),
    ('NETSCHED_FLOOR_RELEASE', '1', {'floor_release': True}),
    ('NETSCHED_FLOOR_RELEASE', '0', {'floor_release': False}),
    ('NETSCHED_HOLD_STARVED', 'yes', {'hold_starved': True}),
    ('NETSCHED_SIM_SEND_JITTER_MS', '1.5', {'send_jitter_ms': 1.5}),
    ('NETSCHED_SIM_SEND_JITTER_MS', '2,7', {'send_jitter_ms': 2.0,
                                            'send_jitter_seed': 7}),
])
def test_each_variable_overrides_its_key_and_is_recorded(var, text, want):
    # the file says otherwise where it can: the environment wins
    exp = load(base(emulator={'drain': text != '1'},
                    scheduler={'floor_release': text != '1'}),
               environ={var: text, 'NETSCHED_RUNS_DIR': '/x'})
    k = exp.knobs
    assert {f: getattr(k, f) for f in want} == want
    assert k.from_environment == ((var, text),)
    assert k.record()['from_environment'] == {var: text}
    line, = k.environment_lines()
    assert line.startswith('measuring knob from the environment: %s=%s '
                           'sets ' % (var, text))
    # experiment.yaml (exp.raw) is the file as run: it gives the same
    # knobs without the environment
    again = load(exp.raw).knobs
    assert again == dataclasses.replace(k, from_environment=())


def test_an_empty_variable_is_unset_and_the_environment_beats_set(
        tmp_path):
    assert load(base(), environ={'NETSCHED_CC': ' '}).knobs == \
        knobs.Knobs()
    p = tmp_path / 'exp.yaml'
    p.write_text(json.dumps(base()))
    os.environ['NETSCHED_INITCWND'] = '4'
    try:
        exp = experiment.load(str(p), sets=[
            (('emulator', 'tcp', 'initcwnd'), 2)])
    finally:
        del os.environ['NETSCHED_INITCWND']
    assert exp.knobs.initcwnd == 4


@pytest.mark.parametrize('environ, msg', [
    ({'NETSCHED_RTO_MIN_MS': 'soon'},
     "emulator: tcp: rto_min_ms: must be an integer, got 'soon' (from the "
     "environment: NETSCHED_RTO_MIN_MS=soon)"),
    ({'NETSCHED_HOLD_STARVED': 'maybe', 'NETSCHED_CC': 'bbr'},
     "scheduler: hold_starved: must be true or false, got 'maybe' (from "
     "the environment: NETSCHED_HOLD_STARVED=maybe)"),
    ({'NETSCHED_HOST_SYSCTL': 'net.ipv4.tcp_recovery'},
     "NETSCHED_HOST_SYSCTL=net.ipv4.tcp_recovery: want KEY=VALUE"),
    ({'NETSCHED_SIM_SEND_JITTER_MS': '1,2,3'},
     'NETSCHED_SIM_SEND_JITTER_MS=1,2,3: want MS[,SEED]'),
])
def test_a_bad_variable_is_named(environ, msg):
    with pytest.raises(ConfigError) as e:
        load(base(), environ=environ)
    assert msg in str(e.value)


def _trace_exp(tmp_path, floor_release):
    """Three one-flow coflows across dumbbell,3's bottleneck (100 MB/s
    everywhere), FIFO in two classes: A (1 MB) at 0, B (2 MB) at 1 ms,
    C (2 MB) at 2 ms."""
    p = tmp_path / 't.txt'
    p.write_text('6 3\n1 0 1 0 1 3:1.0\n2 1 1 1 1 4:2.0\n'
                 '3 2 1 2 1 5:2.0\n')
    return experiment.from_dict(
        {'backend': 'sim', 'topology': 'dumbbell,3', 'link_bps': LINK_BPS,
         'queues': 2, 'policy': 'fifo', 'completion_tolerance': 0,
         'trace': {'path': str(p)},
         'scheduler': {'floor_release': floor_release}},
        str(tmp_path / 'e.yaml'), environ={})


@pytest.mark.parametrize('floor_release, b_cct', [(False, 0.049),
                                                  (True, 0.029)])
def test_floor_release_reaches_the_simulators_rate_setter(
        tmp_path, floor_release, b_cct):
    """A runs alone in class 0 (1 MB at 100 MB/s: 0-10 ms); B and C come
    in while it runs and both go to the last class, 1, where they get
    nothing. When A ends:
      - as they are, B and C share 50 MB/s each: 2 MB in 40 ms, both end
        at 50 ms (B's CCT 49 ms, C's 48 ms);
      - with scheduler.floor_release B, first at the floor, is placed
        anew, in class 0: alone at 100 MB/s it ends at 30 ms (CCT 29
        ms), then C alone at 50 ms (48 ms)."""
    exp = _trace_exp(tmp_path, floor_release)
    out, s = run.execute(exp, str(tmp_path / 'out'), say=lambda m: None)
    cct = {c: r['cct_s'] for c, r in s['coflows'].items()}
    assert cct['1'] == pytest.approx(0.010, abs=1e-5)
    assert cct['2'] == pytest.approx(b_cct, abs=1e-5)
    assert cct['3'] == pytest.approx(0.048, abs=1e-5)
    assert s['knobs']['scheduler']['floor_release'] is floor_release
    with open(os.path.join(out, 'run.json')) as f:
        assert json.load(f)['knobs'] == s['knobs']


def test_the_controller_gets_its_knobs_through_the_fabric_description():
    from netsched import policies, topology as topo
    from netsched.control.spec import ControllerSpec
    from netsched.control.core import ControllerCore
    k = load(base(scheduler={'hold_starved': True})).knobs
    desc = json.loads(ControllerSpec(
        topo.parse_spec('dumbbell,1'), 8, policy='sebf',
        scheduler=k.scheduler(), socket='/nonexistent').to_json())
    assert desc['scheduler'] == {'floor_release': False,
                                 'hold_starved': True}
    c = ControllerCore.from_description(desc)
    assert (c.scheduler.hold_starved, c.scheduler.release_floor) == (
        True, False)
    plain = ControllerCore(topo.parse_spec('dumbbell,1'), 8,
                           policies.make('sebf'))
    assert not plain.scheduler.hold_starved


def test_the_agents_plan_carries_drain_and_congestion_control(
        tmp_path, monkeypatch):
    from netsched.emulator import runner
    from netsched.events import EventLog
    from netsched.workload import taskgraph
    monkeypatch.setattr(runner, 'AgentPool', lambda hosts, path: None)

    class Fab:
        decision_log = socket_path = policy = run_id = None
        queues = 8

        def __init__(self, g):
            self.g = g
            self.state = type('S', (), {'dir': str(tmp_path)})()
    for emu, want in (({}, (None, True)),
                      ({'tcp': {'congestion_control': 'cubic'},
                        'drain': False}, ('cubic', False))):
        exp = load(dict(base(emulator=emu), backend='emu'))
        with EventLog(str(tmp_path / 'ev.jsonl')) as log:
            c = runner.Coordinator(exp, taskgraph.build(exp),
                                   Fab(exp.graph()), log, say=print)
            plan = c.slice_for('hl0')
        assert (plan['tcp_cc'], plan['drain']) == want


def test_host_commands_turn_the_knobs_into_sysctl_and_ip_route():
    from netsched.emulator.interfaces import KNOB_FAILED, host_commands
    always = ['sysctl -qw net.ipv4.tcp_slow_start_after_idle=0']
    assert host_commands(None) == always
    assert host_commands(knobs.Knobs().host_tcp()) == always
    k = load(base(emulator={
        'tcp': {'rto_min_ms': 3000, 'initcwnd': 2, 'cwnd_clamp': 6},
        'host_sysctl': {'net.ipv4.tcp_early_retrans': 0,
                        'net.ipv4.tcp_rmem': '4096 87380 6291456'}})).knobs
    assert host_commands(k.host_tcp()) == always + [
        'sysctl -qw net.ipv4.tcp_early_retrans=0 || echo %s '
        'net.ipv4.tcp_early_retrans=0' % KNOB_FAILED,
        "sysctl -qw 'net.ipv4.tcp_rmem=4096 87380 6291456' || echo %s "
        "'net.ipv4.tcp_rmem=4096 87380 6291456'" % KNOB_FAILED,
        'ip route show | while read r; do ip route change $r rto_min 3000ms '
        'initcwnd 2 cwnd lock 6 || echo %s route; done' % KNOB_FAILED]


def test_an_attached_controller_must_run_the_experiments_knobs():
    from netsched.emulator.attach import AttachedFabric
    from netsched import topology as topo
    exp = load(dict(base(scheduler={'floor_release': True}), backend='emu',
                    policy='sebf'))
    fab = object.__new__(AttachedFabric)
    fab.g, fab.socket_path = exp.graph(), '/x'
    st = {'hosts': topo.hosts(fab.g), 'switches': 2, 'policy': 'sebf',
          'class_map': None, 'scale': exp.scale, 'all_ready': True,
          'ready': 2, 'scheduler': {'floor_release': False,
                                    'hold_starved': False}}
    with pytest.raises(ConfigError, match='scheduler.floor_release true, '
                       'but the controller runs with false'):
        fab._check(exp, st)
    st['scheduler']['floor_release'] = True
    fab._check(exp, st)
    tcp = load(dict(base(emulator={'tcp': {'rto_min_ms': 1000}},
                         scheduler={'floor_release': True}),
                    backend='emu', policy='sebf'))
    with pytest.raises(ConfigError, match='run without --attach'):
        fab._check(tcp, st)
