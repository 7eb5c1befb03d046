"""Gradient-exchange workloads on the real emulator: measured times
against the analytical model, sharing, an agent that dies (its job fails,
the run goes on), clean teardown."""
import glob
import json
import os
import signal
import subprocess
import sys
import time

import yaml

from netsched.pipeline import experiment, run
from netsched.emulator import ovs, runstate
from netsched.workload import models, taskgraph as workload
from netsched import topology as topo

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
LINK = 10e9


def emu(tmp_path, name, jobs, topology='fattree,4', **top):
    d = {'name': name, 'backend': 'emu', 'topology': topology,
         'link_gbps': 10, 'scale': 500, 'policy': 'fair', 'jobs': jobs,
         'timeout_s': 120}
    d.update(top)
    exp = experiment.from_dict(d, str(tmp_path / (name + '.yaml')))
    out, summary = run.execute(exp, str(tmp_path / name), say=lambda m: None)
    assert not set(topo.switches(exp.graph())) & set(ovs.bridges())
    return summary


def comm_times(summary, job):
    return [c['cct_s'] for cid, c in summary['coflows'].items()
            if cid.startswith(job + '/')]


def ratio(measured, want):
    return sum(measured) / len(measured) / want


def test_ring_alone_close_to_analytical(tmp_path):
    """Within 25% of 2(N-1)/N * S / B. Where userspace OVS forwards one
    TCP flow at 890 Mbit/s, 32 runs measured 1.026-1.089; where it
    forwards 700, a CI run's iterations measured 1.13-1.19 (mean 1.150),
    no retransmission: the machine's speed (docs/testing.md)."""
    want = workload.analytical_comm_s(models.get('resnet50'), 'ring', 4, LINK)
    s = emu(tmp_path, 'ring', [dict(
        id='r', model='resnet50', pattern='ring', workers=4,
        iterations=6, compute_scale=0,
        placement=['h0_0_0', 'h0_0_1', 'h0_1_0', 'h0_1_1'])])
    got = comm_times(s, 'r')
    assert len(got) == 6 and s['jobs']['r']['iterations'] == 6
    assert abs(ratio(got, want) - 1) <= 0.25, [x / want for x in got]


def test_ps_alone_close_to_analytical(tmp_path):
    """Within 25% of N(S_shard + largest tensor)/B. It holds because every
    class is split into hashed round-robin buckets (fair_queues, default
    16): with one drop-tail FIFO per class the three pushes shared the PS
    port unequally, tail losses cost RTOs, and runs measured 1.3-1.9x.
    What is left depends on the machine: the run's 3,864 transfers keep
    the agents near a whole core, so it measured 1.08-1.09x where
    userspace OVS forwards one TCP flow at 890 Mbit/s and 1.13-1.20x
    where it forwards 700 (docs/testing.md)."""
    # workers in three other pods: equal RTTs to the PS
    s = emu(tmp_path, 'ps', [dict(
        id='p', model='resnet50', pattern='ps', workers=3, ps_shards=1,
        iterations=4, compute_scale=0,
        placement=['h1_0_0', 'h2_0_0', 'h3_0_0', 'h0_0_0'])])
    want = workload.analytical_comm_s(models.get('resnet50'), 'ps', 3, LINK)
    got = comm_times(s, 'p')
    assert len(got) == 4
    assert abs(ratio(got, want) - 1) <= 0.25, (got, want)


def test_two_jobs_share_a_bottleneck_fairly_and_fully(tmp_path):
    def job(i):
        return dict(id='j%d' % i, model='resnet50', pattern='ring',
                    workers=2, iterations=6, compute_scale=0,
                    placement=['hl%d' % i, 'hr%d' % i])
    alone = emu(tmp_path, 'alone', [job(0)], topology='dumbbell,2')
    both = emu(tmp_path, 'both', [job(0), job(1)], topology='dumbbell,2')
    t_alone = alone['jobs']['j0']['iteration_time_s']['mean']
    for j in ('j0', 'j1'):
        assert both['jobs'][j]['iteration_time_s']['mean'] > 1.3 * t_alone
    # each iteration moves S bytes each way across sl-sr per job
    S = models.get('resnet50').bytes
    start = min(r['arrival_s'] for r in both['jobs'].values())
    end = max(r['arrival_s'] + r['jct_s'] for r in both['jobs'].values())
    throughput = 2 * 6 * S * 8 / (end - start)
    assert throughput >= 0.85 * LINK, throughput / LINK


def test_a_killed_agent_is_reported_and_the_run_cleans_up(tmp_path):
    d = {'name': 'crash', 'backend': 'emu', 'topology': 'fattree,4',
         'link_gbps': 10, 'scale': 500,
         'jobs': [dict(id='r', model='vgg16', pattern='ring', workers=4,
                       iterations=200, placement='packed')]}
    p = tmp_path / 'crash.yaml'
    p.write_text(yaml.safe_dump(d))
    before = set(glob.glob(os.path.join(runstate.RUNS_DIR, '*')))
    proc = subprocess.Popen([sys.executable, '-m', 'netsched', 'run', str(p),
                             '--out', str(tmp_path / 'out')],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)
    victim = None
    deadline = time.monotonic() + 60
    while victim is None and time.monotonic() < deadline:
        for run_dir in set(glob.glob(os.path.join(runstate.RUNS_DIR, '*'))) \
                - before:
            try:
                with open(os.path.join(run_dir, 'state.json')) as f:
                    state = json.load(f)
            except (OSError, ValueError):
                continue
            for info in state.get('pids', []):
                if 'netsched.host.agent' in info['what'] and \
                        os.path.exists(os.path.join(run_dir, 'coord.sock')):
                    victim = (info['pid'], info['what'].split(':')[0])
        time.sleep(0.5)
    assert victim, 'no agent appeared'
    time.sleep(2)                        # let the run get going
    os.kill(victim[0], signal.SIGKILL)   # by exact pid
    out, err = proc.communicate(timeout=60)
    # the run goes on without it: its job fails with the reason, the run
    # ends (no other job), and what it measured before is kept
    assert proc.returncode == 0, (out, err)
    why = 'agent on %s exited with code -9' % victim[1]
    assert 'FAILED r: %s' % why in out, (out, err)
    assert 'Traceback' not in err
    g = topo.fat_tree(4)
    assert not set(topo.switches(g)) & set(ovs.bridges())
    with open(tmp_path / 'out' / 'summary.json') as f:
        r = json.load(f)['jobs']['r']
    assert r['failed'].startswith(why) and r['jct_s'] is None
    assert r['iterations'] < 200
