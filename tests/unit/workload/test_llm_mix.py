"""experiments/llm-mix.yaml, several LLM jobs on one fabric: it passes
`check`, and its plan holds the jobs, groups and collectives the file
and docs/llm-workloads.md describe (the plan only; the runs are the
sweep's)."""
import os
import subprocess
import sys

import pytest

from netsched.pipeline import experiment
from netsched.workload import taskgraph

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
PATH = os.path.join(ROOT, 'experiments', 'llm-mix.yaml')


@pytest.fixture(scope='module')
def plan():
    return taskgraph.build(experiment.load(PATH))


def kinds(plan, job):
    """The kinds of a job's coflows: tp, pp, dp, ep (what comes before
    the first dot after '<job>/<iteration>/')."""
    return {c.split('/')[2].split('.')[0] for c in plan.coflow_bytes
            if c.startswith(job + '/')}


def test_the_file_passes_check():
    r = subprocess.run([sys.executable, '-m', 'netsched', 'check', PATH],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert ': ok' in r.stdout


def test_two_3d_jobs_and_one_moe_job(plan):
    exp = experiment.load(PATH)
    assert exp.backend == 'sim' and exp.topology.startswith('fattree')
    par = {j.id: (j.model, j.collective) for j in exp.jobs}
    assert sorted(par) == ['gpt-a', 'gpt-b', 'moe']
    for jid in ('gpt-a', 'gpt-b'):
        model, p = par[jid]
        assert model == 'gpt3-13b'
        assert (p.tp, p.pp, p.dp, p.ep) == (2, 4, 2, 1)
        assert p.micro_batches > 1
    model, p = par['moe']
    assert model == 'mixtral-8x7b'
    assert (p.tp, p.pp, p.ep) == (2, 1, 4) and p.dp % p.ep == 0
    # every worker a host of its own: the jobs meet only on the fabric
    hosts = [h for j in plan.jobs.values() for h in j.workers]
    assert len(hosts) == len(set(hosts)) == 40


def test_each_job_has_its_kinds_of_traffic(plan):
    # the 3D jobs: tensor all-reduces, pipeline sends and data-parallel
    # all-reduces; the MoE job: tensor all-reduces, expert all-to-alls
    # and the dense layers' data-parallel all-reduces, no pipeline
    assert kinds(plan, 'gpt-a') == kinds(plan, 'gpt-b') == {'tp', 'pp',
                                                           'dp'}
    assert kinds(plan, 'moe') == {'tp', 'ep', 'dp'}


def test_tensor_groups_stay_under_a_leaf(plan):
    leaf = plan.leaf_of
    sends = [t for t in plan.tasks if t.kind == 'send']
    tp = [t for t in sends if t.coflow.split('/')[2].startswith('tp.')]
    assert tp and all(leaf[t.host] == leaf[t.dst] for t in tp)
    # the other kinds cross leaves: that is where the jobs meet
    for kind in ('pp.', 'dp.', 'ep.'):
        assert any(leaf[t.host] != leaf[t.dst] for t in sends
                   if t.coflow.split('/')[2].startswith(kind)), kind


def test_collectives_are_their_algorithms(plan):
    sends = [t for t in plan.tasks if t.kind == 'send']

    def members(job, prefix):
        """Per coflow of the job's first iteration whose kind starts
        with ``prefix``: its senders and receivers."""
        out = {}
        for t in sends:
            j, it, name = t.coflow.split('/', 2)
            if j == job and it == '0' and name.startswith(prefix):
                out.setdefault(name, []).append((t.host, t.dst))
        return out
    # a tp ring of 2 ranks: each step, each rank sends to the other
    for pairs in members('gpt-a', 'tp.').values():
        assert len(pairs) == 2 and pairs[0] == pairs[1][::-1]
    # an expert all-to-all of 4 ranks: one step, every ordered pair
    for pairs in members('moe', 'ep.').values():
        assert len(pairs) == 12 and len(set(pairs)) == 12
    # a pipeline send: one flow per tensor rank of the micro-batch
    for pairs in members('gpt-b', 'pp.').values():
        assert len(pairs) == 2 * 2      # tp x dp ranks of the stage
