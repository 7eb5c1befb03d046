"""The controller schedules: under SEBF, the class the controller's
scheduler decided is set by its rule in the ingress switch and seen on
the wire downstream (scapy on the far switch's ports), while the hosts
send unmarked; the registered agent is told the same class. Every test
runs with the app under Ryu and again under os-ken."""
import importlib
import json
import threading
import time

import pytest

from netsched.emulator import measure
from netsched.control.spec import ControllerSpec
from netsched.emulator.fabric import Fabric
from netsched.topology import dumbbell
from tests.support import prerequisite

from .helpers import leftovers

MB = 1e6
# (host, dst, client port, server port, coflow, bytes)
CONNS = [('hl0', 'hr0', 41001, 5301, 'small/0', 1 * MB),
         ('hl1', 'hr1', 41002, 5302, 'large/0', 10 * MB)]


@pytest.fixture(scope='module', params=['ryu', 'os-ken'])
def fab(request):
    framework = request.param
    try:
        importlib.import_module(framework.replace('-', '_'))
    except ImportError:
        prerequisite.missing('%s is not installed (tools/bootstrap.sh)'
                             % framework)
    g = dumbbell(2)
    f = Fabric(ControllerSpec.for_link(g, 20, queues=8, policy='sebf'),
               framework=framework)
    with f:
        pids = [(p['pid'], p['start']) for p in f.state.data['pids']]
        yield f
    assert leftovers(g, pids) == []


def register(fab, agents):
    """Act as the agents of two hosts: register one connection and one
    send each, report both sends started."""
    for i, (h, dst, sport, dport, coflow, size) in enumerate(CONNS):
        c = fab.client()
        agents.append(c)
        c.request('register', host=h, run='wire-test',
                  conns=[{'id': 1, 'sport': sport, 'dport': dport,
                          'dst_ip': fab.ip(dst)}],
                  sends=[{'id': i + 1, 'coflow': coflow, 'job': coflow[:-2],
                          'bytes': size, 'conn': 1, 'dst': dst}])
    now = time.monotonic()
    for i, c in enumerate(agents):
        c.tell('report', events=[{'ev': 'start', 'task': i + 1,
                                  'ready': now, 't': now}])


def test_controller_dscp_is_on_the_wire_downstream(fab):
    from scapy.all import IP, TCP, AsyncSniffer, conf
    agents = []
    try:
        register(fab, agents)
        deadline = time.monotonic() + 5
        with fab.client() as c:
            while True:
                d = c.request('decision')
                rules = [r for rs in d['rules'].values() for r in rs]
                # a coflow gets class 0 at once (as its agent marks an
                # unclassified coflow), then the policy's class
                decided = all(d['coflows'].get(cf, {}).get('class')
                              is not None for *_, cf, _ in CONNS)
                if decided and len(rules) == 2 or \
                        time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        assert sorted(r['class'] for r in rules) == [0, 1], d
        assert list(d['rules']) == ['%016x' % fab.g.nodes['sl']['dpid']]
        # each registered agent is told its coflow's class (a coflow
        # that was alone at first may have been told 0 before)
        for a, (_, _, _, _, coflow, _) in zip(agents, CONNS):
            want = d['coflows'][coflow]['class']
            told = None
            while told != want:
                m = a.receive('classes')
                assert m['op'] == 'classes' and list(m['classes']) == [coflow]
                told = m['classes'][coflow]
        assert d['coflows']['small/0']['class'] == 0
        # scapy keeps the interfaces' indexes it first read: an earlier
        # fabric's sr-eth1 is gone, this one's has another index
        conf.ifaces.reload()
        # (no libpcap here: a Python-side filter instead of BPF)
        sniffers = {sport: AsyncSniffer(
            iface='sr-eth%d' % fab.g['sr'][dst]['ports']['sr'], store=True,
            lfilter=lambda p, sport=sport: TCP in p and p[TCP].sport == sport)
            for _, dst, sport, _, _, _ in CONNS}
        for s in sniffers.values():
            s.start()
        time.sleep(0.5)
        # one after the other: they share sl->sr, where the second class
        # would starve behind the first. iperf3 sends with TOS 0. Meanwhile
        # the controller's link load (port statistics) is read.
        loads, stop = [], threading.Event()

        def watch():
            with fab.client() as c:
                while not stop.wait(0.25):
                    loads.extend(ln['util'] for ln in
                                 c.request('decision')['links']
                                 if ln['link'] == 'sl->sr')
        w = threading.Thread(target=watch)
        w.start()
        try:
            for h, dst, sport, dport, _, _ in CONNS:
                measure.run_iperf(fab, [measure.Flow(h, dst, sport, dport,
                                                     2)])
        finally:
            stop.set()
            w.join()
        assert max(loads) > 0.8, loads     # one greedy flow fills it
        seen = {}
        for sport, s in sniffers.items():
            pkts = s.stop()
            data = [p for p in pkts if TCP in p and len(p[TCP].payload)]
            assert len(data) > 10, (sport, len(pkts))
            seen[sport] = {p[IP].tos >> 2 for p in data}
        # small/0 ranks first: class 0 = DSCP 56; large/0: class 1 = 48
        assert seen == {41001: {56}, 41002: {48}}
    finally:
        for a in agents:
            a.close()


def test_agents_started_by_hand_run_an_experiment_on_a_fabric_that_is_up(
        fab, tmp_path):
    """The worked example of docs/emulation.md ("Running the emulator by
    hand"): a fabric up with the controller
    running SEBF, `netsched run EXP --attach SOCKET`, and one agent per
    host started by hand with the command it prints. The run completes,
    the controller's decisions reach the event log, and a second run on
    the same controller starts from a clean slate."""
    from netsched import events
    from netsched.pipeline import experiment, run
    exp = experiment.from_dict({
        'name': 'attach', 'backend': 'emu', 'topology': 'dumbbell,2',
        'link_gbps': 10, 'scale': 500, 'policy': 'sebf', 'timeout_s': 60,
        'jobs': [{'id': 'small', 'model': 'resnet50', 'pattern': 'ring',
                  'workers': 2, 'iterations': 3, 'compute_scale': 0,
                  'placement': ['hl0', 'hr0']},
                 {'id': 'large', 'model': 'vgg16', 'pattern': 'ring',
                  'workers': 2, 'iterations': 1, 'compute_scale': 0,
                  'placement': ['hl1', 'hr1']}]},
        str(tmp_path / 'attach.yaml'))
    for attempt in ('first', 'second'):
        said, result = [], {}

        def go():
            try:
                result['out'] = run.execute(exp, str(tmp_path / attempt),
                                            say=said.append, attach=fab.socket_path)
            except Exception as e:          # reported below
                result['error'] = e
        th = threading.Thread(target=go)
        th.start()
        deadline = time.monotonic() + 20
        cmds = []
        while len(cmds) < 4 and time.monotonic() < deadline and \
                'error' not in result:
            cmds = [m.split(None, 1) for m in said if '--host' in m]
            time.sleep(0.1)
        assert len(cmds) == 4, (said, result)
        for host, cmd in cmds:                 # the user, in each host
            cmd = cmd.rstrip(' &').replace('> /tmp/',
                                            '> %s/' % tmp_path)
            fab.popen(host, ['sh', '-c', cmd])
        th.join(120)
        assert 'error' not in result, result
        out, summary = result['out']
        assert summary['jobs']['small']['iterations'] == 3
        kinds = {e['ev'] for e in events.read(out + '/events.jsonl')}
        assert 'classes' in kinds
        with open(out + '/run.json') as f:
            info = json.load(f)['backend_info']
        assert sorted(info['tcp_timeouts_by_host']) == ['hl0', 'hl1',
                                                        'hr0', 'hr1']
        assert sum(info['tcp_retransmits_by_connection'].values()) == \
            info['tcp_retransmits']
        # per connection (this kernel counts them per socket): every
        # timeout a host saw during the run was one of its sending
        # connections' (the receiving ones only acknowledge)
        per_conn = info['tcp_timeouts_by_connection']
        for h, n in info['tcp_timeouts_by_host'].items():
            assert n is not None and n <= sum(v for k, v in per_conn.items()
                            if k.startswith(h + '#')), (h, info)
        assert set(info['tcp_rto_recovery_s_by_connection']) == \
            set(per_conn)
