"""Geryon and TensorExpress on hand-worked snapshots: per-send classes
from where a send's data sits in its job's next forward pass (urgency
for Geryon, the tensor's consumption position for TensorExpress), data
of no model last, no coflow order, the same answer every time."""
import numpy as np
import pytest

from netsched import policies
from netsched.errors import ConfigError
from netsched.policies import (Snapshot, asks_per_flow, flow_priority,
                               urgency_class)
from netsched.policies.geryon import Geryon
from netsched.policies.tensorexpress import TensorExpress

NAN = np.nan


def snap(flows, pending=(), queues=8, jobs=None, urgency=True,
         position=True):
    """flows: (coflow, link, remaining bytes, urgency, position);
    pending: the same for sends not started yet. Coflow c belongs to job
    jobs[c] (default: job 'j<c>'). urgency/position False: the backend
    knows none (empty arrays)."""
    C = 1 + max([f[0] for f in flows] + [p[0] for p in pending] + [-1])
    links = sorted({f[1] for f in flows} | {p[1] for p in pending}) or [0]
    pid = {lk: i for i, lk in enumerate(links)}

    def col(rows, i, dt=float):
        return np.array([r[i] for r in rows], dt)
    return Snapshot(
        t=0.0, queues=queues, link_capacity=np.full(len(links), 8.0),
        path_links=np.array([[lk] for lk in links]),
        flow_path=np.array([pid[f[1]] for f in flows], np.int64),
        flow_coflow=col(flows, 0, np.int64),
        flow_remaining=col(flows, 2), flow_sent=np.zeros(len(flows)),
        flow_rate=np.zeros(len(flows)),
        coflow_id=tuple('c%d' % c for c in range(C)),
        coflow_arrival=np.zeros(C), coflow_sent=np.zeros(C),
        coflow_job=tuple(jobs or ['j%d' % c for c in range(C)]),
        flow_urgency=col(flows, 3) if urgency else np.zeros(0),
        flow_position=col(flows, 4) if position else np.zeros(0),
        pending_path=np.array([pid[p[1]] for p in pending], np.int64),
        pending_coflow=col(pending, 0, np.int64),
        pending_bytes=col(pending, 2),
        pending_urgency=col(pending, 3) if urgency else np.zeros(0),
        pending_position=col(pending, 4) if position else np.zeros(0))


def urgencies(us, pending=(), **kw):
    """Flows of coflow 0 on link 0 at these urgencies (position NaN)."""
    return snap([(0, 0, 1.0, u, NAN) for u in us],
                [(0, 0, 1.0, u, NAN) for u in pending], **kw)


def positions(ps, pending=(), **kw):
    """Flows of coflow 0 on link 0 at these positions (urgency NaN)."""
    return snap([(0, 0, 1.0, NAN, p) for p in ps],
                [(0, 0, 1.0, NAN, p) for p in pending], **kw)


def classes(d):
    return d.flow_class.tolist(), d.pending_class.tolist()


# --- Geryon --------------------------------------------------------------

GERYON_U = [0.0, 0.24, 0.25, 0.6, 0.99, NAN]


def test_geryon_k4_classes_by_urgency_and_pending_sends():
    # K = 4 classes of a quarter of the model's bytes each: floor(4 u).
    # 0.0 -> 0; 0.24 -> 0.96 -> 0; 0.25 -> exactly 1; 0.6 -> 2.4 -> 2;
    # 0.99 -> 3.96 -> 3; NaN (data of no model) -> Q - 1 = 7, behind all
    # model data. Pending: 0.1 -> 0.4 -> 0; 0.75 -> exactly 3.
    d = policies.make('geryon').decide(urgencies(GERYON_U, [0.1, 0.75]))
    assert classes(d) == ([0, 0, 1, 2, 3, 7], [0, 3])
    assert d.flow_class.dtype == d.pending_class.dtype == np.int64


def test_geryon_class_is_the_workload_lane_when_k_fits_in_q():
    # the workload puts a send on lane urgency_class(u, K): with K <= Q
    # its class is its lane's, so a connection's sends share one class
    for k in (1, 3, 4, 8):
        us = [0.0, 0.1, 0.3, 0.45, 0.5, 0.7, 0.9, 1.0]
        d = policies.make('geryon', {'classes': k}).decide(urgencies(us))
        assert d.flow_class.tolist() == urgency_class(us, k).tolist()


def test_geryon_more_classes_than_queues_merge_in_order():
    # K = 8 on Q = 4: floor(8 u) = 0, 1 (1.92), 2, 4 (4.8), 7 (7.92),
    # then c * Q // K = c // 2: 0, 0, 1, 2, 3; NaN -> Q - 1 = 3
    d = policies.make('geryon', {'classes': 8}).decide(
        urgencies(GERYON_U, [0.1, 0.75], queues=4))
    # pending: floor(0.8) = 0 -> 0; floor(6.0) = 6 -> 3
    assert classes(d) == ([0, 0, 1, 2, 3, 3], [0, 3])
    # K = 6 on Q = 4 (not a multiple): class c at the middle of its band,
    # (c + 0.5) / 6, goes to c * 4 // 6 = 0, 0, 1, 2, 2, 3: in order,
    # every queue used, no queue out of range
    us = [(c + 0.5) / 6 for c in range(6)]
    d = policies.make('geryon', {'classes': 6}).decide(
        urgencies(us, queues=4))
    assert d.flow_class.tolist() == [0, 0, 1, 2, 2, 3]


def test_geryon_edges_one_class_k_equal_q_and_one_queue():
    # classes 1: all model data in class 0 (the paper's single-class
    # baseline), no model's data still last
    d = policies.make('geryon', {'classes': 1}).decide(urgencies(GERYON_U))
    assert d.flow_class.tolist() == [0, 0, 0, 0, 0, 7]
    # K = Q = 8: the model's last eighth shares class 7 with trace data
    d = policies.make('geryon', {'classes': 8}).decide(urgencies(GERYON_U))
    assert d.flow_class.tolist() == [0, 1, 2, 4, 7, 7]
    # one queue: everything in it
    d = policies.make('geryon').decide(urgencies(GERYON_U, queues=1))
    assert d.flow_class.tolist() == [0] * 6


def test_geryon_exact_mode_uses_eight_classes():
    # the simulator's exact mode has no Q: classes as with Q = 8, and
    # they are the flows' priority keys there too
    s = urgencies(GERYON_U, [0.1, 0.75], queues=None)
    d = policies.make('geryon').decide(s)
    assert classes(d) == ([0, 0, 1, 2, 3, 7], [0, 3])
    assert flow_priority(s, d).tolist() == [0, 0, 1, 2, 3, 7]
    # K = 12 > 8: c * 8 // 12; 0.99 -> floor(11.88) = 11 -> 88 // 12 = 7;
    # 0.6 -> 7 -> 56 // 12 = 4; 0.25 -> 3 -> 2; 0.24 -> 2 -> 1
    d = policies.make('geryon', {'classes': 12}).decide(s)
    assert d.flow_class.tolist() == [0, 1, 2, 4, 7, 7]


def test_geryon_workload_asks_for_k_lanes():
    assert policies.make('geryon').workload()['ps_lanes'] == 4
    w = policies.make('geryon', {'classes': 6}).workload()
    assert w['ps_lanes'] == 6 and isinstance(w['ps_lanes'], int)
    # read from a --policy spec, '2.0' is a float: still 2 lanes
    name, params = policies.parse_spec('geryon:classes=2.0')
    assert policies.make(name, params).workload()['ps_lanes'] == 2


@pytest.mark.parametrize('bad, match', [
    (0, 'must be a positive number'), (-1, 'must be a positive number'),
    ('four', 'must be a positive number'),
    (0.5, 'whole number'), (2.5, 'whole number')])
@pytest.mark.parametrize('name', ['geryon', 'tensorexpress'])
def test_classes_must_be_a_whole_positive_number(name, bad, match):
    # 0.5 would pass make()'s positivity check but truncate to 0 classes
    # (class -1: the coflow's, i.e. the top one)
    with pytest.raises(ConfigError, match=match):
        policies.make(name, {'classes': bad})


def test_geryon_coordinates_jobs_and_shards_by_the_same_classes():
    # two PS jobs, each with two shards' coflows (c0, c1 job a; c2, c3
    # job b), on one shared link: flows at one urgency share a class
    # whichever job or shard they belong to; a's front layers (0.1)
    # overtake b's back (0.9) and b's front overtakes a's back
    flows = [(0, 0, 5, 0.1, NAN), (1, 0, 5, 0.9, NAN),
             (2, 0, 5, 0.1, NAN), (3, 0, 5, 0.9, NAN)]
    s = snap(flows, jobs=['a', 'a', 'b', 'b'])
    d = policies.make('geryon').decide(s)
    assert d.flow_class.tolist() == [0, 3, 0, 3]


def test_geryon_without_urgencies_puts_everything_last():
    # a backend that knows no urgency (empty arrays): all is unknown,
    # all in Q - 1 together (no one is favoured)
    s = urgencies([0.1, 0.9], [0.5], urgency=False)
    assert classes(policies.make('geryon').decide(s)) == ([7, 7], [7])


# --- TensorExpress -------------------------------------------------------

TX_P = [0.0, 0.1, 0.3, 0.5, 0.9, NAN]


def test_tensorexpress_quantises_position_onto_eight_and_four_queues():
    # Q = 8, classes 8: floor(8 p): 0; 0.8 -> 0; 2.4 -> 2; exactly 4;
    # 7.2 -> 7; NaN -> 7. Pending 0.05 -> 0.4 -> 0; 0.8 -> 6.4 -> 6
    tx = policies.make('tensorexpress')
    d = tx.decide(positions(TX_P, [0.05, 0.8]))
    assert classes(d) == ([0, 0, 2, 4, 7, 7], [0, 6])
    # Q = 4: classes capped at 4, floor(4 p): 0; 0.4 -> 0; 1.2 -> 1;
    # exactly 2; 3.6 -> 3; NaN -> 3. Pending 0.2 -> 0; 3.2 -> 3
    d = tx.decide(positions(TX_P, [0.05, 0.8], queues=4))
    assert classes(d) == ([0, 0, 1, 2, 3, 3], [0, 3])


def test_tensorexpress_fewer_classes_than_queues_and_cap():
    # classes 4 on Q = 8: model data in 0..3 as above, no model's data
    # still in Q - 1 = 7, behind every tensor
    d = policies.make('tensorexpress', {'classes': 4}).decide(
        positions(TX_P))
    assert d.flow_class.tolist() == [0, 0, 1, 2, 3, 7]
    # classes 16 on Q = 8: capped at 8, as the default
    d = policies.make('tensorexpress', {'classes': 16}).decide(
        positions(TX_P))
    assert d.flow_class.tolist() == [0, 0, 2, 4, 7, 7]
    # exact mode: 8
    s = positions(TX_P, queues=None)
    d = policies.make('tensorexpress').decide(s)
    assert d.flow_class.tolist() == [0, 0, 2, 4, 7, 7]
    assert flow_priority(s, d).tolist() == [0, 0, 2, 4, 7, 7]


def test_tensorexpress_follows_consumption_order_not_bytes():
    # a large tensor consumed late (VGG's fc6: early in cumulative bytes,
    # urgency 0.1, but late in tensor order, position 0.8) is late for
    # TensorExpress (floor(6.4) = 6) and early for Geryon (floor(0.4))
    s = snap([(0, 0, 100, 0.1, 0.8), (0, 0, 1, 0.9, 0.9)])
    assert policies.make('tensorexpress').decide(s).flow_class.tolist() \
        == [6, 7]
    assert policies.make('geryon').decide(s).flow_class.tolist() == [0, 3]


def test_tensorexpress_is_cluster_wide():
    # two jobs on one link: the same position gives the same class in
    # either job; job b's front (0.05 -> 0) overtakes job a's back
    # (0.7 -> 5), and a's pending front tensor (0.0) is tagged 0 too
    flows = [(0, 0, 5, NAN, 0.3), (1, 0, 5, NAN, 0.3),
             (0, 0, 5, NAN, 0.7), (1, 0, 5, NAN, 0.05)]
    s = snap(flows, [(0, 0, 5, NAN, 0.0), (1, 0, 5, NAN, 0.7)],
             jobs=['a', 'b'])
    d = policies.make('tensorexpress').decide(s)
    assert classes(d) == ([2, 2, 5, 0], [0, 5])
    assert flow_priority(s, d).tolist() == [2, 2, 5, 0]


def test_tensorexpress_nan_and_unknown_positions_go_last():
    # trace flows (NaN) behind every tensor, on 8 and on 3 queues
    d = policies.make('tensorexpress').decide(positions([NAN, 0.99]))
    assert d.flow_class.tolist() == [7, 7]
    d = policies.make('tensorexpress').decide(
        positions([NAN, 0.0], [NAN], queues=3))
    assert classes(d) == ([2, 0], [2])
    # no positions known at all: all last, together
    s = positions([0.1, 0.9], [0.5], position=False)
    assert classes(policies.make('tensorexpress').decide(s)) == ([7, 7],
                                                                   [7])


def test_tensorexpress_needs_no_lanes():
    assert 'ps_lanes' not in policies.make('tensorexpress').workload()


# --- both ----------------------------------------------------------------

BOTH = ['geryon', 'tensorexpress']


def mixed():
    """Two jobs' flows and pending sends, urgencies and positions both,
    a trace flow among them."""
    return snap([(0, 0, 3, 0.1, 0.2), (1, 1, 4, 0.6, 0.4),
                 (0, 1, 2, NAN, NAN), (1, 0, 7, 0.95, 0.85)],
                [(0, 0, 1, 0.3, 0.5), (1, 1, 1, 0.0, 0.1)], jobs=['a', 'b'])


@pytest.mark.parametrize('name', BOTH)
def test_no_coflow_order_and_static(name):
    p = policies.make(name)
    assert p.clairvoyant and p.decides_on == 'coflows'
    assert not asks_per_flow(p)
    d = p.decide(mixed())
    assert d.coflow_rank is None and d.coflow_order is None
    assert d.flow_rate is None and d.recheck_at is None
    assert len(d.flow_class) == 4 and len(d.pending_class) == 2
    # every send has a class of its own (none falls back to the coflow's)
    assert (d.flow_class >= 0).all() and (d.pending_class >= 0).all()


@pytest.mark.parametrize('name', BOTH)
def test_the_same_snapshot_gives_the_same_classes(name):
    s = mixed()
    before = (s.flow_urgency.copy(), s.flow_position.copy(),
              s.pending_urgency.copy(), s.pending_position.copy())
    p = policies.make(name)
    a, b = p.decide(s), p.decide(s)
    assert np.array_equal(a.flow_class, b.flow_class)
    assert np.array_equal(a.pending_class, b.pending_class)
    # and a fresh instance agrees; the snapshot is left as it was
    c = policies.make(name).decide(mixed())
    assert np.array_equal(a.flow_class, c.flow_class)
    for x, y in zip(before, (s.flow_urgency, s.flow_position,
                             s.pending_urgency, s.pending_position)):
        assert np.array_equal(x, y, equal_nan=True)


@pytest.mark.parametrize('name, keys', [
    # geryon, K = 4 on urgency: 0.4 -> 0, 2.4 -> 2, NaN -> 7, 3.8 -> 3
    ('geryon', [0, 2, 7, 3]),
    # tensorexpress, 8 on position: 1.6 -> 1, 3.2 -> 3, NaN -> 7, 6.8 -> 6
    ('tensorexpress', [1, 3, 7, 6])])
def test_per_send_classes_are_the_flows_priority_keys(name, keys):
    s = mixed()
    d = policies.make(name).decide(s)
    assert d.flow_class.tolist() == keys
    assert flow_priority(s, d).tolist() == keys


@pytest.mark.parametrize('cls', [Geryon, TensorExpress])
def test_direct_construction_and_empty_snapshot(cls):
    # constructed without make(): the defaults apply
    p = cls()
    assert p.classes == p.params['classes']
    # nothing active, nothing pending: empty classes
    s = snap([], [])
    d = p.decide(s)
    assert d.flow_class.tolist() == [] and d.pending_class.tolist() == []
    # only pending sends (a coflow whose first tensor is not ready yet)
    s = snap([], [(0, 0, 1.0, 0.1, 0.1)])
    assert p.decide(s).pending_class.tolist() == [0]
