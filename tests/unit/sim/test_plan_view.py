"""What the workload plan and the simulator's driver tell policies beyond
flows: each send's urgency (its place in the next forward pass), tensor
slices, connections per urgency class (a policy's ``workload()``), the
loss an iteration mark carries, and the jobs' view (progress, losses,
iteration load, stages)."""
import numpy as np
import pytest

from netsched import policies
from netsched.pipeline import experiment
from netsched.errors import ConfigError
from netsched.policies import Decision, Policy
from netsched.sim import runner
from netsched.workload import models, taskgraph

MB = 2 ** 20


def exp(policy='fair', **job):
    j = dict(id='p', model='resnet50', pattern='ps', workers=2,
             iterations=2)
    j.update(job)
    return experiment.from_dict({'topology': 'dumbbell,3', 'policy': policy,
                                 'jobs': [j]}, 'e.yaml')


def sends(plan, label=''):
    return [t for t in plan.tasks if t.kind == 'send'
            and t.label.startswith(label) and t.iter == 0]


def test_urgency_is_the_share_of_the_model_consumed_before_the_tensor():
    m = models.get('resnet50')
    sizes = [t.bytes for _, t in m.tensors()]
    plan = taskgraph.build(exp())
    push = [t for t in sends(plan, 'push ') if t.worker == 0]
    assert len(push) == len(sizes)
    # back-propagation order: the last tensor first
    want = [sum(sizes[:i]) / m.bytes for i in range(len(sizes) - 1, -1, -1)]
    assert [t.urgency for t in push] == pytest.approx(want)
    assert push[-1].urgency == 0.0 and push[0].urgency < 1.0


def test_ring_buckets_carry_their_front_most_layers_urgency():
    plan = taskgraph.build(exp(pattern='ring', bucket_mb=25.0))
    first = {}
    for t in sends(plan):
        first.setdefault(t.label.split()[0], set()).add(t.urgency)
    assert all(len(u) == 1 for u in first.values())    # one per bucket
    us = [next(iter(first['bucket%d' % b])) for b in range(len(first))]
    assert us == sorted(us, reverse=True) and us[-1] == 0.0


def test_slices_keep_the_bytes_and_split_large_tensors():
    whole = sends(taskgraph.build(exp()), 'push ')
    cut = sends(taskgraph.build(exp(slice_mb=1.0)), 'push ')
    assert sum(t.bytes for t in cut) == sum(t.bytes for t in whole)
    assert max(t.bytes for t in cut) <= MB
    assert len(cut) > len(whole)
    # the slices of one tensor go front slice first... in ready order
    # they keep the tensor's position, their urgency rises by their offset
    fc = [t for t in cut if t.label.startswith('push fc.weight[')
          and t.worker == 0]
    assert len(fc) == 8                   # 8 MB of fc weights, 1 MB each
    us = [t.urgency for t in fc]
    assert us == sorted(us) and us[0] < us[-1]


def test_slice_mb_is_only_for_ps_jobs():
    with pytest.raises(ConfigError, match=r'slice_mb: only a ps job'):
        exp(pattern='ring', slice_mb=1.0)
    with pytest.raises(ConfigError, match=r'bucket_mb: only a ring job'):
        exp(bucket_mb=10.0)


def test_slices_too_small_are_refused_before_any_is_made():
    # ResNet-50's 161 tensors, 97.5 MB: 1e-6 MB slices would be about
    # 10^8 sends an iteration (a check used to run for a minute and fill
    # 10 GB); 0.1 MB ones are 1,039 (under the 10,000 cap)
    with pytest.raises(ConfigError, match=r'job p: slice_mb 1e-06 cuts '
                       r'resnet50 into \d+ sends an iteration; at most '
                       r'10000'):
        taskgraph.build(exp(slice_mb=1e-6))
    # the policy's slice_mb (P3's) is held to the same cap
    e = experiment.from_dict(dict(exp().raw, policy='p3', policy_params={
        'p3': {'slice_mb': 1e-6}}), 'e.yaml')
    with pytest.raises(ConfigError, match=r'slice_mb 1e-06'):
        taskgraph.build(e)
    m = models.get('resnet50')
    n = sum(max(1, -(-t.bytes // (MB // 10))) for _, t in m.tensors())
    assert n < taskgraph.MAX_SLICES
    assert len(sends(taskgraph.build(exp(slice_mb=0.1)), 'push ')) >= n


class Lanes(Policy):
    name = 'test-lanes'

    def workload(self):
        return {'ps_lanes': 3}

    def decide(self, snap):
        return Decision()


def test_a_policy_asks_for_a_connection_per_urgency_class(monkeypatch):
    monkeypatch.setitem(policies.REGISTRY, 'test-lanes', Lanes)
    one = taskgraph.build(exp())
    plan = taskgraph.build(exp('test-lanes'))
    assert len(one.conns) == 2 * 2               # 2 workers x 1 shard x 2
    assert len(plan.conns) == 3 * 2 * 2
    lane_of = {}
    for t in sends(plan):
        k = int(policies.urgency_class(t.urgency, 3))
        # every connection carries one urgency class only
        assert lane_of.setdefault(t.conn, k) == k
    assert sorted(set(lane_of.values())) == [0, 1, 2]


def test_marks_carry_the_jobs_loss_after_the_iteration():
    plan = taskgraph.build(exp(loss=dict(beta0=0.05, beta1=0.5, beta2=0.1),
                               iterations=3))
    jp = plan.jobs['p']
    marks = [t for t in plan.tasks if t.kind == 'mark']
    assert {(t.iter, t.loss) for t in marks} == {
        (k, round(1 / (0.05 * (k + 1) + 0.5) + 0.1, 6)) for k in range(3)}
    assert jp.loss_at(1) == pytest.approx(1 / 0.55 + 0.1)


class Spy(Policy):
    name = 'test-spy'
    clairvoyant = True
    seen = []

    def decide(self, snap):
        Spy.seen.append(snap)
        return Decision()


def test_the_simulator_shows_policies_jobs_and_urgency(monkeypatch,
                                                       tmp_path):
    monkeypatch.setitem(policies.REGISTRY, 'test-spy', Spy)
    Spy.seen = []
    e = experiment.from_dict({
        'topology': 'dumbbell,3', 'policy': 'test-spy', 'jobs': [
            dict(id='a', model='resnet50', pattern='ring', workers=2,
                 iterations=3, placement=['hl0', 'hr0'],
                 loss=dict(beta0=0.05, beta1=0.5, beta2=0.1)),
            dict(id='b', model='resnet50', pattern='ps', workers=2,
                 iterations=2, arrival_s=0.05)]}, 'e.yaml')
    runner.run(e, str(tmp_path / 'log'), lambda m: None)
    views = [s.jobs.get('a') for s in Spy.seen]
    done = [v.done for v in views if v is not None]
    # (a worker's last mark may come before the other's last transfer
    # ends its last coflow: done reaches 3 while the job is still seen)
    assert done == sorted(done) and {0, 1, 2} <= set(done) <= {0, 1, 2, 3}
    last = [v for v in views if v is not None][-1]
    assert [(k, loss) for k, loss, _ in last.losses] == [
        (k, round(1 / (0.05 * k + 0.5) + 0.1, 6))
        for k in range(1, last.done + 1)]
    # one iteration's load: every byte crosses 3 links (hl0-sl-sr-hr0)
    assert last.iteration_load.sum() == pytest.approx(
        3 * last.bytes_per_iteration)
    for s in Spy.seen:
        # a job is in the view while any of its coflows is
        assert set(s.coflow_job) <= set(s.jobs)
        assert all(v.done <= v.iterations for v in s.jobs.values())
        assert len(s.flow_urgency) == len(s.flow_coflow)
        assert len(s.pending_urgency) == len(s.pending_bytes)
        assert np.all((s.flow_urgency >= 0) & (s.flow_urgency < 1))


def test_send_order_priority_sends_front_layers_first_on_both_backends():
    from netsched.host.transport import Transport
    from netsched.sim.drivers import _next_send
    plan = taskgraph.build(exp(send_order='priority', slice_mb=1.0))
    waiting = [t for t in sends(plan, 'push ') if t.worker == 0][:6]
    assert all(t.order == t.urgency for t in waiting)
    order = []
    q = list(waiting)
    while q:
        order.append(q.pop(_next_send(q)).id)
    assert order == [t.id for t in sorted(waiting,
                                          key=lambda t: (t.urgency, t.id))]
    # the agents' per-connection queue picks the same
    net = Transport(1.0, {}, {}, None, None)
    import queue
    net.out = {waiting[0].conn: (None, queue.PriorityQueue())}
    for t in waiting:
        net.send(t.to_dict(), 0.0)
    got = [net.out[waiting[0].conn][1].get()[1]['id'] for _ in waiting]
    assert got == order
    # ready order: as they came
    plain = [t for t in sends(taskgraph.build(exp()), 'push ')
             if t.worker == 0][:6]
    assert all(t.order is None for t in plain)
    assert [q.pop(_next_send(q)).id for q in [list(plain)] * 6] == [
        t.id for t in plain]


def test_front_layers_arrive_sooner_when_sent_first(tmp_path):
    """On the simulator, one PS job with compute across the dumbbell:
    sending front layers first cuts their latency (ready to received)."""
    from netsched.pipeline import metrics
    out = {}
    for order in ('ready', 'priority'):
        e = experiment.from_dict({
            'topology': 'dumbbell,3', 'link_gbps': 1, 'jobs': [dict(
                id='p', model='resnet50', pattern='ps', workers=2,
                iterations=3, slice_mb=2.0, send_order=order,
                placement=['hl0', 'hl1', 'hr0'])]}, 'e.yaml',
            backend='sim')
        runner.run(e, str(tmp_path / order), lambda m: None)
        m = metrics.from_log(str(tmp_path / order))
        out[order] = metrics.tensor_latency(m['tensors'])
    assert out['priority']['front_s']['mean'] < \
        0.8 * out['ready']['front_s']['mean']


def test_p3_slices_and_sends_front_layers_first_with_fair_links():
    plan = taskgraph.build(exp('p3'))
    push = [t for t in sends(plan, 'push ') if t.worker == 0]
    assert max(t.bytes for t in push) <= 4 * MB
    assert all(t.order == t.urgency for t in push)
    p3 = policies.make('p3', {'slice_mb': 2})
    assert p3.static and p3.workload() == {'send_order': 'priority',
                                           'slice_mb': 2}
    # a job's own slices win over the policy's
    own = taskgraph.build(exp('p3', slice_mb=1.0))
    assert max(t.bytes for t in sends(own)) <= MB
