"""tensorexpress:lanes=true: a connection per class, cut by consumption
position, so every connection carries sends of one tag only."""
import numpy as np

from netsched.pipeline import experiment
from netsched.policies import urgency_class
from netsched.workload import taskgraph

EXP = """
name: lanes
backend: sim
topology: dumbbell,2
link_gbps: 10
jobs:
  - {id: r50, model: resnet50, pattern: ps, workers: 2, ps_shards: 1,
     iterations: 1, placement: [hl0, hl1, hr0]}
"""


def _plan(tmp_path, policy):
    p = tmp_path / 'lanes.yaml'
    p.write_text(EXP)
    return taskgraph.build(experiment.load(str(p), backend='sim',
                                           policy=policy))


def test_one_tag_per_connection(tmp_path):
    plan = _plan(tmp_path, 'tensorexpress:lanes=true')
    sends = [t for t in plan.tasks if t.kind == 'send']
    tags = {}
    for t in sends:
        tag = int(urgency_class(np.array([t.position]), 8)[0])
        tags.setdefault(t.conn, set()).add(tag)
    assert all(len(v) == 1 for v in tags.values())
    # 8 lanes per worker/shard pair each way: 2 workers x 2 directions
    assert len(tags) == 2 * 2 * 8
    # the front tensor (position 0) and the last go on different lanes
    first = min(sends, key=lambda t: t.position)
    last = max(sends, key=lambda t: t.position)
    assert tags[first.conn] == {0} and tags[last.conn] == {7}


def test_without_lanes_one_connection_carries_every_tag(tmp_path):
    plan = _plan(tmp_path, 'tensorexpress')
    conns = {t.conn for t in plan.tasks if t.kind == 'send'}
    assert len(conns) == 2 * 2
    # the urgency lanes (Geryon) are unchanged: cut by bytes, not position
    g = _plan(tmp_path, 'geryon')
    for t in g.tasks:
        if t.kind == 'send':
            lane = sorted(c.id for c in g.conns
                          if (c.src, c.dst) == (
                              g.conns[t.conn].src, g.conns[t.conn].dst))
            assert lane.index(t.conn) == int(urgency_class(
                np.array([t.urgency]), 4)[0])
