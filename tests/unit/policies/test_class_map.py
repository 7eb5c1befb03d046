"""Mapping a policy's order onto Q classes: stable placement and the
``share`` map (policies.base.stable_classes, coflow_class), hand-worked,
with properties on random orders, and the experiment key that selects
the map."""
import numpy as np
import pytest

from netsched import policies
from netsched.pipeline import experiment, run
from netsched.errors import ConfigError
from netsched.policies import Decision, Snapshot, stable_classes
from netsched.policies.base import CLASS_MAPS

MB = 2 ** 20


def both(rank, cur, q):
    r, c = np.array(rank), np.array(cur)
    return (stable_classes(r, c, q).tolist(),
            stable_classes(r, c, q, share=True).tolist())


def test_share_runs_a_conveyor_without_walking_it_to_the_floor():
    """Q = 4. Two jobs' iterations take turns at the front (A, then B)
    while two coflows S1, S2 wait behind them, starved; each new
    iteration ranks behind the nearly finished one and ahead of S1, S2.
    Ranks in order, classes listed in rank order."""
    # t0: A0, B0, S1, S2 arrive: both maps give the dense mapping
    assert both([0, 1, 2, 3], [-1] * 4, 4) == ([0, 1, 2, 3], [0, 1, 2, 3])
    # t1: A0 ends; A1 arrives between B0 (class 1) and S1 (class 2).
    # stable: A1 takes 2, S1 is pushed to 3, S2 (at 3) would need 4: it
    # stays at 3, tied with S1. share: two running coflows ranked after
    # A1 (S1, S2) and one class after the 2 it wants (3): the push would
    # end in a tie at Q-1, so A1 shares B0's class 1; S1, S2 stay put.
    stable, share = both([0, 1, 2, 3], [1, -1, 2, 3], 4)
    assert stable == [1, 2, 3, 3]
    assert share == [1, 1, 2, 3]
    # t2: B0 ends; B1 arrives behind A1, ahead of S1, S2.
    # stable (from [2, _, 3, 3]): B1 wants 3 = S1's class: it takes 3 and
    # all three of B1, S1, S2, ranked apart, share the last class.
    assert stable_classes(np.array([0, 1, 2, 3]), np.array([2, -1, 3, 3]),
                          4).tolist() == [2, 3, 3, 3]
    # share (from [1, _, 2, 3]): as at t1, B1 shares A1's class 1
    assert stable_classes(np.array([0, 1, 2, 3]), np.array([1, -1, 2, 3]),
                          4, share=True).tolist() == [1, 1, 2, 3]


def test_share_pushes_where_room_is_left():
    """Q = 8, F in 1, S1 in 2, S2 in 5, a new coflow N ranked between F
    and S1: two running coflows after N, five classes after the 2 it
    wants (3..7): room, so N takes 2 and pushes S1 to 3 as stable
    placement does; S2 (5) is already after."""
    assert both([0, 1, 2, 3], [1, -1, 2, 5], 8) == ([1, 2, 3, 5],
                                                   [1, 2, 3, 5])


def test_a_shared_class_holds_while_full_and_splits_by_demotion():
    """The tie of the conveyor's t1 (Q = 4: F 1, N 1, S1 2, S2 3) stays
    at the next decision; once S2 ends, one running coflow (S1) is left
    after N against one class after the 2 it wants: room, so N moves
    down to 2 and S1 to 3 (demotions: their queued packets leave
    first)."""
    share = dict(share=True)
    assert stable_classes(np.array([0, 1, 2, 3]), np.array([1, 1, 2, 3]), 4,
                          **share).tolist() == [1, 1, 2, 3]
    assert stable_classes(np.array([0, 1, 2]), np.array([1, 1, 2]), 4,
                          **share).tolist() == [1, 2, 3]


def test_share_properties_on_random_orders():
    """Never against the ranks, inside 0..Q-1, applying it again changes
    nothing, and with no current classes it is the dense mapping
    min(dense rank, Q - 1), as stable placement is."""
    rng = np.random.default_rng(5)
    for trial in range(300):
        n = int(rng.integers(1, 30))
        q = int(rng.integers(1, 9))
        rank = rng.integers(0, n, n)
        current = np.where(rng.random(n) < 0.3, -1, rng.integers(0, q, n))
        group = rng.integers(0, 4, n) if trial % 2 else None
        got = stable_classes(rank, current, q, group, share=True)
        assert got.min() >= 0 and got.max() <= q - 1
        for i in range(n):
            assert (got[rank < rank[i]] <= got[i]).all()
        again = stable_classes(rank, got, q, group, share=True)
        assert again.tolist() == got.tolist()
        dense = np.unique(rank, return_inverse=True)[1].reshape(-1)
        assert stable_classes(rank, np.full(n, -1), q, share=True).tolist() \
            == np.minimum(dense, q - 1).tolist()


def snapshot(n, queues):
    """n coflows, one flow each on one link, no jobs."""
    return Snapshot(
        t=0.0, queues=queues, link_capacity=np.array([8.0]),
        path_links=np.array([[0]]), flow_path=np.zeros(n, np.int64),
        flow_coflow=np.arange(n), flow_remaining=np.ones(n),
        flow_sent=np.zeros(n), flow_rate=np.zeros(n),
        coflow_id=tuple('c%d' % i for i in range(n)),
        coflow_arrival=np.zeros(n), coflow_sent=np.zeros(n))


def test_coflow_class_selects_the_map():
    s, d = snapshot(4, 4), Decision(coflow_rank=np.array([0, 1, 2, 3]))
    cur = [1, -1, 2, 3]                      # the conveyor's t1
    assert policies.coflow_class(s, d, cur).tolist() == [1, 2, 3, 3]
    assert policies.coflow_class(s, d, cur, class_map='stable').tolist() \
        == [1, 2, 3, 3]
    assert policies.coflow_class(s, d, cur, class_map='share').tolist() \
        == [1, 1, 2, 3]
    with pytest.raises(ValueError, match='class_map'):
        policies.coflow_class(s, d, cur, class_map='log')


def base_exp(**kw):
    return dict({'topology': 'dumbbell,1', 'jobs': [
        {'id': 'j', 'model': 'resnet50', 'pattern': 'ring', 'workers': 2,
         'iterations': 1}]}, **kw)


def test_the_experiment_names_its_class_map():
    assert experiment.from_dict(base_exp(), 'e.yaml').class_map == 'stable'
    for m in CLASS_MAPS:
        assert experiment.from_dict(base_exp(class_map=m),
                                    'e.yaml').class_map == m
    with pytest.raises(ConfigError,
                       match=r"class_map: must be one of stable, share, "
                             r"got 'log'"):
        experiment.from_dict(base_exp(class_map='log'), 'e.yaml')


def test_the_simulator_maps_with_the_class_map_it_is_given(
        tmp_path, monkeypatch):
    """SEBF on one 1 MB/s port, Q = 3: A 1 MB, S1 5 MB, S2 6 MB at 0
    (classes 0, 1, 2); N 0.75 MB at 0.5 s ranks between A (0.5 MB left)
    and S1. stable: N takes 1 and pushes S1 into 2 beside S2; A ends at
    1.0, N at 1.75 (CCT 1.25), then S1 and S2 share the port: S1's 5 MB
    at 0.5 MB/s end at 11.75, S2 at 12.75. share: two running coflows
    after N, one class after the 1 it wants: N shares A's class 0; A's
    0.5 MB at 0.5 MB/s end at 1.5, N's last 0.25 MB at 1.75, S1 alone at
    6.75, S2 at 12.75."""
    path = tmp_path / 'trace.txt'
    path.write_text('2 4\n1 0 1 0 1 1:1.0\n2 0 1 0 1 1:5.0\n'
                    '3 0 1 0 1 1:6.0\n4 500 1 0 1 1:0.75\n')
    d = {'topology': 'bigswitch,2', 'big_switch': True, 'backend': 'sim',
         'link_bps': 8 * MB, 'queues': 3, 'policy': 'sebf',
         'completion_tolerance': 0, 'trace': {'path': str(path)}}
    want = {'stable': {'1': 1.0, '2': 11.75, '3': 12.75, '4': 1.25},
            'share': {'1': 1.5, '2': 6.75, '3': 12.75, '4': 1.25}}
    for m in CLASS_MAPS:
        exp = experiment.from_dict(dict(d, class_map=m),
                                   str(tmp_path / 'e.yaml'))
        _, s = run.execute(exp, str(tmp_path / m), say=lambda x: None)
        got = {k: c['cct_s'] for k, c in s['coflows'].items()}
        assert got == pytest.approx(want[m], abs=1e-5)   # 1 us steps
        # the run's record says which map it ran
        assert s['class_map'] == m


def test_the_controller_maps_with_the_class_map_it_is_given(monkeypatch):
    """The emulator's controller passes its ``class_map`` to
    coflow_class at each decision (None: the default)."""
    from netsched import topology as topo
    from netsched.control import scheduler
    from netsched.control.core import ControllerCore
    seen = []
    real = scheduler.coflow_class

    def spy(*a, **k):
        seen.append(a[4] if len(a) > 4 else k.get('class_map'))
        return real(*a, **k)
    monkeypatch.setattr(scheduler, 'coflow_class', spy)
    from netsched.control.spec import ControllerSpec
    for m in (None, 'share'):
        # as the Ryu app starts it: from the fabric's description
        c = ControllerCore.from_description(ControllerSpec(
            topo.parse_spec('dumbbell,1'), 8, policy='sebf', scale=500.0,
            class_map=m, socket='/nonexistent.sock').to_dict())
        assert c.scheduler.class_map == m
        assert c.handle({'op': 'status'}, 0.0).reply['class_map'] == m
        out = c.handle({'op': 'register', 'host': 'hl0', 'run': 'r',
                        'conns': [{'id': 1, 'sport': 40001, 'dport': 5000,
                                   'dst_ip': '10.0.1.2'}],
                        'sends': [{'id': 1, 'coflow': 'a/0', 'job': 'a',
                                   'bytes': 1e6, 'conn': 1, 'dst': 'hr0'}]},
                       0.0)
        assert out.reply['ok'], out.reply
        c.handle({'op': 'report', 'host': 'hl0', 'events': [
            {'ev': 'start', 'task': 1, 'ready': 1.0, 't': 1.0}]}, 1.0)
        assert c.step(1.0).decided
        assert seen[-1] == m
