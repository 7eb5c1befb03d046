"""Faults on the real emulator: a link and then a switch go down in the
middle of a run and come back. The controller must see the ports go,
reroute around them and restore the routes; every job must finish; and
the emulator and the simulator must agree on whom each outage hurt. An
agent killed fails its job and no other.

The job that no fault touches is named with shell metacharacters: no
name from an experiment may reach a shell unquoted (issue 27), and
nothing of it may run."""
import glob
import json

from netsched import topology as topo
from netsched.emulator import ovs
from netsched.pipeline import experiment, run

# "crossing" is a ring through e0_1's two uplinks (two of its flows climb
# out of e0_1 and two come down into it); APART a ring inside edge
# switch e3_1, which no outage touches
APART = 'apart; touch /tmp/netsched-pwned-$(id -u) `id` " \' #'
EXP = {
    'name': 'faults-test', 'backend': 'emu', 'topology': 'fattree,4',
    'link_gbps': 10, 'scale': 500, 'policy': 'fair', 'seed': 1,
    'timeout_s': 120,
    'jobs': [
        {'id': 'crossing', 'model': 'resnet50', 'pattern': 'ring',
         'workers': 4, 'iterations': 30,
         'placement': ['h0_1_0', 'h2_0_0', 'h0_1_1', 'h3_0_0']},
        {'id': APART, 'model': 'resnet50', 'pattern': 'ring',
         'workers': 2, 'iterations': 30, 'placement': ['h3_1_0', 'h3_1_1']}],
    'faults': [{'link': ['e0_1', 'a0_0'], 'at': 0.4, 'until': 1.4},
               {'switch': 'a0_1', 'at': 2.0, 'until': 3.0}]}


def _run(tmp_path, backend):
    exp = experiment.from_dict(EXP, str(tmp_path / 'faults.yaml'),
                               backend=backend)
    out = tmp_path / backend
    _, summary = run.execute(exp, str(out), say=lambda m: None)
    with open(out / 'events.jsonl') as f:
        events = [json.loads(line) for line in f]
    return summary, events


def test_a_link_and_a_switch_fail_and_come_back(tmp_path):
    emu, events = _run(tmp_path, 'emu')
    assert not set(topo.switches(topo.fat_tree(4))) & set(ovs.bridges())
    assert emu['totals']['jobs_done'] == 2, emu['jobs']
    faults = [(e['what'], e['target']) for e in events if e['ev'] == 'fault']
    assert faults == [('down', 'a0_0-e0_1'), ('up', 'a0_0-e0_1'),
                      ('down', 'a0_1'), ('up', 'a0_1')]
    # the controller saw the ports (OFPT_PORT_STATUS) and rerouted, and
    # every reroute was confirmed by the switches' barriers
    # in the order decided: the log has each once its barriers are back,
    # and a later reroute's may all come back before an earlier one's
    reroutes = sorted((e for e in events if e['ev'] == 'reroute'),
                      key=lambda e: e['t'])
    # every port status the controller got, for a reroute that is missing
    why = [(round(e['t'], 3), e['switch'], e['port'], e['up'])
           for e in events if e['ev'] == 'port_status']
    assert all(r['applied_ms'] is not None for r in reroutes), reroutes
    assert reroutes[0]['links_down'] == ['a0_0-e0_1']
    assert reroutes[1]['links_down'] == []
    a01 = sorted(topo.switch_links(topo.fat_tree(4), 'a0_1'))
    # the switch's four links went one by one, then came back
    assert max((r['links_down'] for r in reroutes), key=len) == a01
    assert reroutes[-1]['links_down'] == [], (reroutes[-1], why)
    # while a0_1 was down e0_1 climbed through a0_0 only, and the
    # restored routes spread over both uplinks again: a0_1 carried the
    # ring's traffic both before its outage and after
    outage = next(o for o in emu['faults'] if o['target'] == 'a0_1')
    assert outage['up_s'] is not None

    def used(link, a, b):
        return [u for t, dt, u in _samples(events, link)
                if t >= a and t + dt <= b and u > 0.05]
    assert used('e0_1->a0_1', 0.0, outage['down_s'])
    assert used('e0_1->a0_1', outage['up_s'] + 0.5, emu['duration_s'])
    # whom each outage hurt: the ring through e0_1, on both backends
    sim, _ = _run(tmp_path, 'sim')
    assert sim['totals']['jobs_done'] == 2
    for e, s in zip(emu['faults'], sim['faults']):
        assert e['target'] == s['target']
        assert e['hurt'] == s['hurt'] == ['crossing'], (e, s)
    assert not glob.glob('/tmp/netsched-pwned*')


def _samples(events, link):
    return [(e['t'], e['dt'], e['util'][link]) for e in events
            if e['ev'] == 'links' and link in e['util']]


def test_a_killed_agent_fails_its_jobs_and_the_others_finish(tmp_path):
    # the agent of one of "crossing"'s hosts is killed mid-run; APART
    # has no task there and must finish as if nothing happened
    d = dict(EXP, faults=[{'agent': 'h2_0_0', 'at': 1.0}])
    for backend in ('emu', 'sim'):
        exp = experiment.from_dict(d, str(tmp_path / 'agent.yaml'),
                                   backend=backend)
        out = tmp_path / ('agent-' + backend)
        _, s = run.execute(exp, str(out), say=lambda m: None)
        jobs = s['jobs']
        assert jobs['crossing']['failed'].startswith(
            'the agent on h2_0_0 was killed at'), (backend, jobs)
        assert jobs['crossing']['jct_s'] is None
        assert 'failed' not in jobs[APART] and \
            jobs[APART]['iterations'] == 30, (backend, jobs)
        assert (s['totals']['jobs_done'], s['totals']['jobs_failed']) == \
            (1, 1)
        # the failed job is out of the totals: they are apart's alone
        assert s['totals']['avg_jct_s'] == jobs[APART]['jct_s']
        with open(out / 'events.jsonl') as f:
            failed = [json.loads(x) for x in f if '"job_failed"' in x]
        assert [e['job'] for e in failed] == ['crossing']
    assert not set(topo.switches(topo.fat_tree(4))) & set(ovs.bridges())
    assert not glob.glob('/tmp/netsched-pwned*')


def test_the_controller_is_killed_and_started_again(tmp_path):
    # SEBF decides classes all along; the controller is down from 1 s to
    # 2 s: the switches forward on what they hold, the restarted
    # controller adopts their rules without resending or duplicating
    # any, the agents register again, and scheduling resumes
    from netsched.control import openflow as of
    d = dict(EXP, policy='sebf',
             faults=[{'controller': 'restart', 'at': 1.0, 'until': 2.0}])
    exp = experiment.from_dict(d, str(tmp_path / 'ctl.yaml'))
    out = tmp_path / 'ctl'
    _, s = run.execute(exp, str(out), say=lambda m: None)
    with open(out / 'events.jsonl') as f:
        events = [json.loads(x) for x in f]
    assert s['totals']['jobs_done'] == 2, s['jobs']
    assert [(e['what'], e['kind']) for e in events if e['ev'] == 'fault'] \
        == [('down', 'controller'), ('up', 'controller')]
    up = next(e['t'] for e in events if e['ev'] == 'fault'
              and e['what'] == 'up')
    g = topo.fat_tree(4)
    adopts = {e['switch']: e for e in events if e['ev'] == 'adopt'}
    assert set(adopts) == set(topo.switches(g)), sorted(adopts)
    for sw, a in adopts.items():
        # the switch held its routes once each, and got nothing again
        assert a['held'].get('routing') == len(of.route_rules(g, sw)), a
        assert a['sent'] == 0, a
    # scheduling resumed: SEBF classed coflows after the restart
    assert [e for e in events if e['ev'] == 'classes' and e['t'] > up]
    assert not set(topo.switches(g)) & set(ovs.bridges())
