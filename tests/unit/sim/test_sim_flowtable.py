"""The simulator's flow table: flows started one by one are joined to the
record and the active arrays when those are next read (FlowTable._flush),
and one flow starts without arrays (_start_one); the table reads the
same as starting them all at once, on a fat-tree and on a big switch."""
import numpy as np
import pytest

from netsched import fluid, topology
from netsched.sim.coflows import CoflowTable
from netsched.sim.flows import ACTIVE, FlowTable

COLS = ('path', 'coflow', 'src', 'dst', 'size', 'start', 'sport', 'dport')


def table(big):
    g = topology.big_switch(6) if big else topology.fat_tree(4)
    net = fluid.Network(g, big_switch=big)
    cof = CoflowTable()
    for c in range(3):
        cof.index('c%d' % c, 0.0)
    return FlowTable(net, cof), topology.hosts(g)


def flows(hosts, n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        a, b = rng.choice(len(hosts), 2, replace=False)
        out.append((hosts[a], hosts[b], float(rng.integers(1, 10 ** 6)),
                    int(rng.integers(0, 3)), int(rng.integers(1000, 2000))))
    return out


@pytest.mark.parametrize('big', [False, True], ids=['fattree', 'bigswitch'])
def test_one_by_one_reads_as_all_at_once(big):
    one, hosts = table(big)
    many, _ = table(big)
    fl = flows(hosts, 40, seed=4)
    ids = []
    for s, d, b, c, sp in fl:
        ids += one.start([s], [d], [b], c, 0.5, sport=[sp],
                         dport=[7000]).tolist()
    # the same flows in one call, a coflow index each
    got = many.start([f[0] for f in fl], [f[1] for f in fl],
                     [f[2] for f in fl], [f[3] for f in fl], 0.5,
                     sport=[f[4] for f in fl], dport=[7000] * len(fl))
    assert ids == list(range(40)) == got.tolist()
    for k in COLS:
        assert np.array_equal(one.record[k][:40], many.record[k][:40]), k
    for name in ACTIVE:
        assert np.array_equal(getattr(one, name), getattr(many, name),
                              equal_nan=True), name
    assert one.coflows.active_flows.tolist() == \
        many.coflows.active_flows.tolist()


def test_pending_flows_join_before_any_read():
    # two flows started, nothing read yet: 2 pending; reading a_id joins
    # them (ids 0 and 1, 100 and 200 bytes left, no rate yet)
    t, hosts = table(False)
    t.start([hosts[0]], [hosts[5]], [100.0], 0, 1.0)
    t.start([hosts[1]], [hosts[6]], [200.0], 1, 1.0)
    assert t._pending == 2
    assert t.a_id.tolist() == [0, 1]
    assert t._pending == 0
    assert t.a_rem.tolist() == [100.0, 200.0]
    assert t.a_rate.tolist() == [0.0, 0.0]
    assert t.record['start'][:2].tolist() == [1.0, 1.0]
    # a third, then the record read first: it joins too
    t.start([hosts[2]], [hosts[7]], [300.0], 2, 2.0)
    assert t.record.n == 3 and t.a_id.tolist() == [0, 1, 2]
    assert t.coflows.active_flows[:3].tolist() == [1, 1, 1]


def test_a_flow_of_no_bytes_is_refused_either_way():
    from netsched.errors import NetschedError
    t, hosts = table(False)
    with pytest.raises(NetschedError):
        t.start([hosts[0]], [hosts[1]], [0.0], 0, 0.0)
    with pytest.raises(NetschedError):
        t.start([hosts[0], hosts[2]], [hosts[1], hosts[3]], [5.0, -1.0],
                0, 0.0)


def test_snapshot_flow_sent_computed_when_read():
    # the simulator's snapshot gives flow_sent (size - bytes left) when a
    # policy first reads it: flows of 100 and 300 bytes, 40 and 250 left,
    # have sent 60 and 50; before the read it is not computed
    from netsched.sim.rates import SimSnapshot, snapshot
    t, hosts = table(True)
    t.start([hosts[0], hosts[1]], [hosts[2], hosts[3]], [100.0, 300.0], 0,
            0.0)
    t.a_rem[:] = [40.0, 250.0]
    snap = snapshot(1.0, None, t.net, t)
    assert isinstance(snap, SimSnapshot)
    assert not isinstance(snap.__dict__['_later_flow_sent'], np.ndarray)
    assert snap.flow_sent.tolist() == [60.0, 50.0]
    assert snap.flow_sent is snap.flow_sent          # computed once
    assert snap.flow_remaining.tolist() == [40.0, 250.0]


def test_snapshot_sums_from_engine_coflows_as_from_flow_coflow():
    # the simulator's snapshot sums rates, counts flows and takes
    # per-coflow keys from the engine's coflow indices while flow_coflow
    # is not made: the numbers a plain Snapshot gives from flow_coflow.
    # Coflows c1 and c3 of c0..c4 live (positions 0 and 1); by hand, c1's
    # flows at 1, 0 and 4 bit/s sum to 5, c3's single one to 2
    import dataclasses
    from netsched.policies import base
    from netsched.sim.rates import _Later, snapshot
    g = topology.big_switch(6)
    net = fluid.Network(g, big_switch=True)
    cof = CoflowTable()
    for c in range(5):
        cof.index('c%d' % c, 0.0)
    t = FlowTable(net, cof)
    hosts = topology.hosts(g)
    t.start(hosts[:3], hosts[3:], [10.0, 20.0, 30.0], 1, 0.0)
    t.start([hosts[0]], [hosts[5]], [40.0], 3, 0.0)
    t.a_rate[:] = [1.0, 0.0, 4.0, 2.0]
    snap = snapshot(1.0, None, net, t)
    plain = base.Snapshot(**{f.name: getattr(snap, f.name)
                             for f in dataclasses.fields(base.Snapshot)})
    fresh = snapshot(1.0, None, net, t)           # flow_coflow not made
    assert fresh.coflow_rate().tolist() == [5.0, 2.0]
    assert fresh.coflow_flows().tolist() == [3, 1]
    assert fresh.per_flow(np.array([7, 9])).tolist() == [7, 7, 7, 9]
    assert isinstance(fresh.__dict__['_later_flow_coflow'], _Later)
    for s in (snapshot(1.0, None, net, t), fresh):
        assert np.array_equal(base.rate_estimate(s),
                              base.rate_estimate(plain))
    assert snap.flow_coflow.tolist() == [0, 0, 0, 1]
    assert np.array_equal(snap.coflow_rate(), plain.coflow_rate())


def test_a_decision_that_changes_no_key_keeps_the_rates(monkeypatch):
    # a policy asks to decide again at t=1 and t=2 (a recheck time) and
    # ranks the two coflows as before: the flows, their paths and keys
    # are the same, so the rates stand without a filling; when it swaps
    # the ranks at t=3, or a flow finishes, the filling runs again, and
    # every rate is the one a fresh filling gives
    from netsched.policies.base import Decision, Policy
    from netsched.sim.rates import RateSetter

    class Swap(Policy):
        name = 'swap-test'

        def decide(self, snap):
            r = [1, 0] if snap.t >= 3 else [0, 1]
            return Decision(coflow_rank=np.array(r[:len(snap.coflow_id)]),
                            recheck_at=snap.t + 1.0)

    t, hosts = table(True)
    t.start([hosts[0], hosts[1], hosts[1]], [hosts[2], hosts[2], hosts[3]],
            [1e9, 1e9, 1e9], [0, 1, 1], 0.0)
    rs = RateSetter(t.net, Swap(), t)
    calls = []
    real = fluid.allocate

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(fluid, 'allocate', counted)

    def fresh():
        return real(t.net.table(), t.a_path, t.a_key, t.net.capacity)[0]
    rs.update(0.0)
    assert len(calls) == 1 and rs.recheck_s == 1.0
    first, keys = t.a_rate, t.a_key
    # 10 Gbit/s ports; c0 first: its flow fills host 2's port, c1's flow
    # to it gets none, c1's other flow host 1's whole port
    assert t.a_rate.tolist() == [1e10, 0.0, 1e10]
    for now in (1.0, 2.0):
        rs.update(now)
        # no coflow moved, no flow joined: the keys themselves stand
        assert t.a_key is keys
        assert len(calls) == 1 and t.a_rate is first
        assert rs.first_finish_s() == 0.8        # 1e9 bytes at 10 Gbit/s
    rs.update(3.0)          # c1 first: its flows share host 1's port
    assert len(calls) == 2 and t.a_rate.tolist() == [5e9, 5e9, 5e9]
    assert np.array_equal(t.a_rate, fresh())
    t.a_rem[:] = [1e9, 0.0, 1e9]                 # c1's first flow is done
    t.send(0.0, 3.0)
    ids, _ = t.finish(3.0)
    assert ids.tolist() == [1]
    rs.flows_finished(False)
    rs.update(3.0)
    assert len(calls) == 3 and t.a_rate.tolist() == [1e10, 1e10]
    assert np.array_equal(t.a_rate, fresh())
    # a flow of c0 joins (key 0 until keyed): the keys are made again,
    # c0's class for it too
    keys = t.a_key
    k0, k1 = keys.tolist()
    assert 0 < k1 < k0                  # c1's class before c0's
    t.start([hosts[4]], [hosts[5]], [1e9], 0, 3.0)
    rs.flows_started()
    rs.update(3.0)
    assert t.a_key is not keys and t.a_key.tolist() == [k0, k1, k0]
    assert len(calls) == 4 and t.a_rate.tolist() == [1e10, 1e10, 1e10]


def test_rate_sums_made_as_flows_send_equal_a_fresh_sum():
    # once a snapshot asked for coflow_rate, send() sums the rates of the
    # flows it does not finish, per coflow, in flow order; after the done
    # ones leave and new ones join (no rate yet, a new coflow among
    # them), coflow_rate gives those sums, the bits a fresh sum over the
    # active flows gives. Flows of c0 at 3 and 0.1 bit/s, of c1 at 0.2
    # and 0.7, of c0 again at 0.3 (a second run); c1's first is done
    from netsched.policies import base
    from netsched.sim.rates import snapshot
    t, hosts = table(True)
    t.start(hosts[:5], hosts[1:6], [8.0, 1e3, 1e3, 1e3, 1e3],
            [0, 0, 1, 1, 0], 0.0)
    t.a_rate[:] = [3.0, 0.1, 0.2, 0.7, 0.3]
    assert snapshot(0.0, None, t.net, t).coflow_rate().tolist() == \
        [3.0 + 0.1 + 0.3, 0.2 + 0.7]              # asked: now it is made
    assert t.want_rate_sums
    t.a_rem[2] = 0.2 * 1.0 / 8.0       # what c1's first sends in 1 s
    t.send(1.0, 1.0)
    assert t.rate_sums() is not None
    ids, _ = t.finish(1.0)
    assert ids.tolist() == [2]
    c2 = t.coflows.index('c2', 1.0)
    t.start([hosts[0]], [hosts[2]], [5.0], c2, 1.0)
    snap = snapshot(1.0, None, t.net, t)
    assert t.rate_sums() is not None   # still those flows' (and c2's: 0)
    got = snap.coflow_rate()
    assert got.tolist() == [(3.0 + 0.1) + 0.3, 0.7, 0.0]
    plain = np.bincount(snap.flow_coflow, weights=snap.flow_rate,
                        minlength=3)
    assert np.array_equal(got, plain)
    assert snap.coflow_flows().tolist() == [3, 1, 1]
    assert np.array_equal(base.rate_estimate(snap),
                          base.rate_estimate(snapshot(1.0, None, t.net, t)))
    # new rates: the sums are not theirs, and are made afresh
    t.a_rate = np.array([1.0, 2.0, 4.0, 8.0, 0.0])
    assert t.rate_sums() is None
    assert snapshot(1.0, None, t.net, t).coflow_rate().tolist() == \
        [1.0 + 2.0 + 8.0, 4.0, 0.0]
