"""The soak benchmark's state checks and figures (benchmarks/soak_bench.py;
the soak itself needs root and the emulator, docs/benchmarks.md), on
made-up command output and a made-up /proc: no emulator, no root."""
import json
import math
import os

import pytest

from benchmarks import soak_bench as sb

ME = 100
ROOT_NS = 'net:[4026531840]'
HOST_NS = 'net:[4026532500]'


def fake_proc(base, procs, fds=None):
    """A /proc with, per pid, stat (comm, state, ppid, start time as
    field 22), cmdline, ns/net (a symlink whose target is the name) and
    fds entries in fd/."""
    for pid, (comm, state, ppid, start, cmd, ns) in procs.items():
        d = base / str(pid)
        (d / 'ns').mkdir(parents=True)
        # fields 3.. : state ppid, then 17 more, then starttime (field 22)
        rest = [state, str(ppid)] + ['0'] * 17 + [str(start), '0']
        (d / 'stat').write_text('%d (%s) %s\n' % (pid, comm, ' '.join(rest)))
        (d / 'cmdline').write_bytes(b''.join(a.encode() + b'\0'
                                             for a in cmd))
        os.symlink(ns, str(d / 'ns' / 'net'))
        (d / 'fd').mkdir()
        for i in range((fds or {}).get(pid, 3)):
            (d / 'fd' / str(i)).write_text('')
    (base / 'self').mkdir(exist_ok=True)      # not a pid: skipped
    return str(base)


MACHINE = {
    1: ('systemd', 'S', 0, 10, ['/sbin/init'], ROOT_NS),
    ME: ('python', 'S', 1, 500, ['python', 'soak_bench.py'], ROOT_NS),
    400: ('ovs-vswitchd', 'S', 1, 50, ['ovs-vswitchd', 'unix:db.sock'],
          ROOT_NS),
    401: ('ovsdb-server', 'S', 1, 40, ['ovsdb-server', 'conf.db'], ROOT_NS),
}
CLEAN = {'ovs-vsctl': 'b0\n',
         'ip -o link': '1: lo: <LOOPBACK,UP> mtu 65536\n'
                       '2: eth0: <BROADCAST,UP> mtu 1500\n',
         'ip netns': '',
         'tc qdisc': 'qdisc noqueue 0: dev lo root refcnt 2\n'
                     'qdisc fq_codel 0: dev eth0 root refcnt 2 limit 10240p\n'}


def commands(out):
    def run(args):
        for prefix, text in out.items():
            if ' '.join(args).startswith(prefix.split()[0]) and \
                    all(w in args for w in prefix.split()[1:]):
                return text
        raise OSError('no fake for %s' % args)
    return run


def snap(tmp_path, name, procs, out, fds=None, runs=()):
    runs_dir = tmp_path / (name + '-runs')
    runs_dir.mkdir()
    for r in runs:
        (runs_dir / r).mkdir()
        (runs_dir / r / 'state.json').write_text(json.dumps(
            {'owner_pid': 4242}))
    proc = fake_proc(tmp_path / name, procs, fds)
    return sb.snapshot(command=commands(out), proc=proc,
                       runs_dir=str(runs_dir),
                       pidfiles=str(tmp_path / 'no-pidfiles'), me=ME)


def test_the_parsers_read_each_command_by_name():
    assert sb.parse_bridges('s1\ns2\n') == {'s1': 'bridge s1',
                                            's2': 'bridge s2'}
    links = sb.parse_links('1: lo: <LOOPBACK> mtu 65536\n'
                           '7: s1-eth1@if6: <BROADCAST> mtu 9000\n'
                           'garbage\n')
    assert sorted(links) == ['lo', 's1-eth1']
    assert sb.parse_netns('h1 (id: 0)\nh2\n\n') == {
        'netns h1': 'named netns h1', 'netns h2': 'named netns h2'}
    q = sb.parse_qdiscs(
        'qdisc htb 1: dev s1-eth1 root refcnt 2 r2q 10 default 0x10\n'
        'qdisc pfifo 10: dev s1-eth1 parent 1:10 limit 128p\n'
        'not a qdisc line\n')
    assert q == {'s1-eth1 htb 1: root': 'qdisc htb 1: on s1-eth1 (root)',
                 's1-eth1 pfifo 10: parent 1:10':
                 'qdisc pfifo 10: on s1-eth1 (parent 1:10)'}


def test_a_clean_machine_against_itself_leaves_nothing(tmp_path):
    a = snap(tmp_path, 'a', MACHINE, CLEAN)
    b = snap(tmp_path, 'b', MACHINE, CLEAN)
    assert a['errors'] == {}
    assert a['ovs_fds'] == {'ovs-vswitchd': [400, 3],
                            'ovsdb-server': [401, 3]}
    assert sb.diff(a, b) == {}


def test_every_leftover_is_reported_by_name(tmp_path):
    base = snap(tmp_path, 'a', MACHINE, CLEAN)
    after = dict(MACHINE)
    # a stray agent in a host's namespace, orphaned to init; a zombie
    # child of the benchmark with a live child of its own
    after[900] = ('python3', 'S', 1, 7000,
                  ['python3', '-m', 'netsched.host.agent', '--socket', 's'],
                  HOST_NS)
    after[901] = ('netsched', 'Z', ME, 7100, [], ROOT_NS)
    after[902] = ('sleep', 'S', 901, 7200, ['sleep', '600'], ROOT_NS)
    out = dict(CLEAN)
    out['ovs-vsctl'] = 'b0\ns1\n'
    out['ip -o link'] += '9: s1-eth1@if8: <BROADCAST> mtu 9000\n'
    out['ip netns'] = 'left1\n'
    # eth0's counters changed (not new); s1-eth1 got an htb root (new)
    out['tc qdisc'] = ('qdisc noqueue 0: dev lo root refcnt 2\n'
                       'qdisc fq_codel 0: dev eth0 root refcnt 3 limit 1p\n'
                       'qdisc htb 1: dev s1-eth1 root refcnt 2\n')
    now = snap(tmp_path, 'b', after, out, fds={400: 8, 401: 2},
               runs=['r-1'])
    left = sb.diff(base, now)
    assert left['bridges'] == ['bridge s1']
    assert left['interfaces'] == ['interface s1-eth1']
    assert left['qdiscs'] == ['qdisc htb 1: on s1-eth1 (root)']
    assert left['netns'] == [
        HOST_NS + ' held by pid 900 (python3 -m netsched.host.agent '
        '--socket s)', 'named netns left1']
    assert left['processes'] == [
        'pid 900 (python3 -m netsched.host.agent --socket s)']
    assert left['children'] == [
        'pid 901 ([netsched]) exited, not yet reaped',
        'pid 902 (sleep 600)']
    # 8 fds against 3 is 5 more; ovsdb-server went down to 2: not a leak
    assert left['ovs_fds'] == [
        'ovs-vswitchd pid 400: 8 descriptors, 5 more than at the baseline']
    assert left['run_records'] == [
        'run record %s (owner pid 4242)' % (tmp_path / 'b-runs' / 'r-1')]
    assert set(left) == set(sb.CHECKS)


def test_what_was_there_at_the_baseline_is_not_a_leftover(tmp_path):
    machine = dict(MACHINE)
    machine[900] = ('ryu-manager', 'S', 1, 300, ['ryu-manager', 'app.py'],
                    ROOT_NS)
    out = dict(CLEAN, **{'ovs-vsctl': 'b0\nold\n'})
    base = snap(tmp_path, 'a', machine, out, runs=['old-run'])
    # the same pid with another start time is another process
    machine[900] = machine[900][:3] + (9000,) + machine[900][4:]
    now = snap(tmp_path, 'b', machine, out, runs=['old-run'])
    assert sb.diff(base, now) == {'processes': ['pid 900 (ryu-manager '
                                                'app.py)']}


def test_an_ovs_restart_or_stop_is_reported(tmp_path):
    base = snap(tmp_path, 'a', MACHINE, CLEAN)
    moved = dict(MACHINE)
    moved[410] = moved.pop(400)
    del moved[401]
    now = snap(tmp_path, 'b', moved, CLEAN, fds={410: 99})
    assert sb.diff(base, now)['ovs_fds'] == [
        'ovs-vswitchd restarted: pid 400 -> 410 (descriptors not '
        'comparable)', 'ovsdb-server not running (was pid 401)']


def test_a_command_that_fails_is_an_error_not_a_clean_check(tmp_path):
    out = {k: v for k, v in CLEAN.items() if k != 'ovs-vsctl'}
    s = snap(tmp_path, 'a', MACHINE, out)
    assert 'bridges' in s['errors'] and s['bridges'] == {}


def test_a_leftover_that_clears_is_kept_as_the_first_look():
    base = {'bridges': {}}
    looks = iter([{'bridges': {'s1': 'bridge s1'}}, {'bridges': {}}])
    first, left, secs, now = sb.settled(base, lambda: next(looks), 5.0,
                                        sleep=lambda s: None)
    assert first == {'bridges': ['bridge s1']} and left == {}
    # one that stays is reported once the time is up
    first, left, _, _ = sb.settled(base, lambda: {'bridges': {'s1': 'x'}},
                                   0.0)
    assert first == left == {'bridges': ['x']}


def summary(jcts, its):
    return {'totals': {'avg_jct_s': sum(j for j in jcts.values()
                                        if j is not None) / len(jcts)},
            'jobs': {j: {'jct_s': jcts[j],
                         'iteration_time_s': {'mean': its[j]}}
                     for j in jcts}}


def test_figures_of_a_summary():
    f = sb.figures(summary({'a': 2.0, 'b': 4.0}, {'a': 0.5, 'b': 0.25}))
    assert f == {'avg_jct_s': 3.0, 'jct_s': {'a': 2.0, 'b': 4.0},
                 'iteration_s': {'a': 0.5, 'b': 0.25}, 'jobs': ['a', 'b'],
                 'complete': True}
    cut = sb.figures(summary({'a': 2.0, 'b': None}, {'a': 0.5, 'b': None}))
    assert cut['jobs'] == ['a'] and cut['complete'] is False
    assert sb.figures({})['complete'] is False


def test_spread_by_hand():
    # 1,2,3,4: mean 2.5; squares 2.25+0.25+0.25+2.25 = 5, /3, sqrt
    s = sb.spread([1.0, 2.0, 3.0, 4.0])
    assert s['mean'] == 2.5 and s['min'] == 1.0 and s['max'] == 4.0
    assert s['sd'] == pytest.approx(math.sqrt(5 / 3))
    assert sb.spread([7.0])['sd'] == 0.0


def runs_of(jct_values, jobs=('a',)):
    return [{'run': i, 'rc': 0, 'wall_s': 30.0,
             'figures': {'avg_jct_s': v, 'iteration_s': {},
                         'jobs': list(jobs), 'complete': True}}
            for i, v in enumerate(jct_values)]


def test_a_run_beyond_three_sd_is_flagged():
    # 11 runs at 10 and one at 20: mean 130/12 = 10.833; squares
    # 11 x 0.8333^2 + 9.1667^2 = 7.639 + 84.028 = 91.667, /11 = 8.333,
    # sd 2.887; 20 is 9.167 / 2.887 = 3.18 sd out, the others 0.29
    fl = sb.flags(runs_of([10.0] * 11 + [20.0]))
    assert [(x['run'], x['metric']) for x in fl] == [(11, 'avg_jct_s')]
    assert '3.2 sd' in fl[0]['why']
    # with 10 runs (9 at 10, one at 20): mean 11, squares 9 + 81 = 90,
    # /9 = 10, sd 3.162: 9 / 3.162 = 2.85 sd, not flagged -- with the sd
    # of all runs no run gets beyond (n-1)/sqrt(n) sd
    assert sb.flags(runs_of([10.0] * 9 + [20.0])) == []
    # a wall time equal in every run has sd 0 and flags nothing
    assert all(x['metric'] != 'wall_s' for x in fl)


def test_a_run_with_another_job_set_is_flagged():
    runs = runs_of([10.0] * 3, jobs=('a', 'b'))
    runs[1]['figures']['jobs'] = ['a']
    fl = sb.flags(runs)
    assert [(x['run'], x['metric'], x['value']) for x in fl] == [
        (1, 'jobs', ['a'])]


class Args:
    def __init__(self, tmp_path, runs):
        self.runs = runs
        self.experiment = 'demo.yaml'
        self.out = str(tmp_path / 'bench-soak.json')
        self.run_dir = str(tmp_path / 'runs')
        self.settle_s = 0.0


def fake_state(leave_after=None):
    """A machine whose snapshot gains a bridge once run ``leave_after``
    has ended; each run writes a summary."""
    done = []

    def take():
        s = {c: {} for c in sb.CHECKS}
        s.update(errors={}, ovs_fds={'ovs-vswitchd': [400, 30]})
        if leave_after is not None and len(done) > leave_after:
            s['bridges'] = {'s1': 'bridge s1'}
        return s

    def run(cmd, log):
        out = cmd[cmd.index('--out') + 1]
        os.makedirs(out)
        with open(os.path.join(out, 'summary.json'), 'w') as f:
            json.dump(summary({'a': 2.0 + len(done)}, {'a': 0.5}), f)
        done.append(cmd)
        return 0, False
    return take, run, done


def test_a_clean_soak_passes_and_records_every_run(tmp_path):
    take, run, done = fake_state()
    rc = sb.soak(Args(tmp_path, 3), lambda m: None, take=take, run=run)
    assert rc == 0 and len(done) == 3
    assert done[0][-4:] == ['--backend', 'emu', '--out',
                            str(tmp_path / 'runs' / 'run-1')]
    with open(tmp_path / 'bench-soak.json') as f:
        res = json.load(f)
    assert res['pass'] is True and res['final']['left'] == {}
    assert [r['figures']['avg_jct_s'] for r in res['runs']] == [2.0, 3.0,
                                                                 4.0]
    assert res['spread']['avg_jct_s']['mean'] == 3.0


def test_a_bridge_left_by_one_run_fails_the_soak(tmp_path):
    take, run, _ = fake_state(leave_after=1)
    lines = []
    rc = sb.soak(Args(tmp_path, 3), lines.append, take=take, run=run)
    assert rc == 1
    with open(tmp_path / 'bench-soak.json') as f:
        res = json.load(f)
    assert [r['left'] for r in res['runs']] == [
        {}, {'bridges': ['bridge s1']}, {'bridges': ['bridge s1']}]
    assert res['final']['left'] == {'bridges': ['bridge s1']}
    assert res['pass'] is False
    assert any('left at the end: bridge s1' in x for x in lines)
    assert any(x.startswith('bridges') and '2 (runs 2,3)' in x
               for x in '\n'.join(lines).splitlines())


def test_a_failed_run_fails_the_soak(tmp_path):
    take, run, _ = fake_state()

    def failing(cmd, log):
        run(cmd, log)
        return 1, False
    rc = sb.soak(Args(tmp_path, 2), lambda m: None, take=take, run=failing)
    assert rc == 1
    with open(tmp_path / 'bench-soak.json') as f:
        assert json.load(f)['failed_runs'] == [1, 2]
