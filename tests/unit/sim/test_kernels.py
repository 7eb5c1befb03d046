"""The compiled kernels (netsched.fluid.kernels, netsched.sim.kernels):
hand-worked cases, and the same bits as the numpy code they replace on
random inputs (the event logs' identity rests on that)."""
import os

import numpy as np
import pytest

from netsched import fluid
from netsched.events import FLOW_LINE
from netsched.fluid import kernels
from netsched.sim import kernels as sim_kernels

needs_kernels = pytest.mark.skipif(
    kernels.lib() is None or sim_kernels.lib() is None,
    reason='no compiled kernels: %s' % (kernels.why_not()
                                        or sim_kernels.why_not()))


def table(paths):
    H = max([len(p) for p in paths] + [1])
    t = np.full((len(paths), H), -1, np.int64)
    for i, p in enumerate(paths):
        t[i, :len(p)] = p
    return t


def maxmin(paths, keys, cap):
    res = np.r_[np.asarray(cap, float), np.inf]
    capx = res.copy()
    rate = kernels.maxmin(table(paths), np.arange(len(paths)),
                          np.asarray(keys, np.int64), res, capx,
                          fluid.REL_TOL)
    return rate, res[:-1]


def numpy_allocate(monkeypatch, *args):
    monkeypatch.setattr(kernels, 'OFF', True)
    try:
        return fluid.allocate(*args)
    finally:
        monkeypatch.setattr(kernels, 'OFF', False)


@needs_kernels
def test_maxmin_two_links_by_hand():
    # link 0 (10) carries x and y, link 1 (4) carries y and z: link 1's
    # share 4 / 2 = 2 is the smaller (link 0's is 10 / 2 = 5), so y and
    # z get 2 and x the 10 - 2 = 8 left on link 0
    rate, res = maxmin([[0], [0, 1], [1]], [0, 0, 0], [10.0, 4.0])
    assert rate.tolist() == [8.0, 2.0, 2.0]
    assert res.tolist() == [0.0, 0.0]


@needs_kernels
def test_maxmin_priority_by_hand():
    # y (key 0) goes first, alone: min(10, 4) = 4, which fills link 1;
    # z (key 1) crosses the full link 1 and gets nothing; x (key 1) gets
    # the 10 - 4 = 6 left on link 0
    rate, res = maxmin([[0], [0, 1], [1]], [1, 0, 1], [10.0, 4.0])
    assert rate.tolist() == [6.0, 4.0, 0.0]
    # keys need not be dense nor small: the same order, the same rates
    rate2, _ = maxmin([[0], [0, 1], [1]], [10 ** 12, -5, 10 ** 12],
                      [10.0, 4.0])
    assert rate2.tolist() == rate.tolist()


@needs_kernels
def test_maxmin_flow_on_no_link_gets_nothing():
    # a flow whose path has no link (-1 only) is never frozen: rate 0;
    # the other two share link 0's 6
    rate, _ = maxmin([[], [0], [0]], [0, 0, 0], [6.0])
    assert rate.tolist() == [0.0, 3.0, 3.0]


@needs_kernels
def test_maxmin_equal_shares_freeze_together():
    # links 0 and 1 (cap 6 each) both have 3 flows: share 2 everywhere,
    # all freeze in the first round at 2
    rate, res = maxmin([[0], [0], [0, 1], [1], [1]], [0] * 5, [6.0, 6.0])
    assert rate.tolist() == [2.0, 2.0, 2.0, 2.0, 2.0]
    assert res.tolist() == [0.0, 0.0]


def _random_instance(rng):
    L = int(rng.integers(1, 14))
    P = int(rng.integers(1, 12))
    H = int(rng.integers(1, 5))
    F = int(rng.integers(0, 60))
    t = np.full((P, H), -1, np.int64)
    for p in range(P):
        h = int(rng.integers(0, min(H, L) + 1))
        t[p, :h] = rng.choice(L, size=h, replace=False)
    path = rng.integers(0, P, F)
    # few classes, many, or a spread too wide to count (argsort path)
    key = rng.integers(0, int(rng.choice([1, 3, 50])), F) * int(
        rng.choice([1, 1, 10 ** 7]))
    # few distinct capacities: ties between links' shares are common
    cap = rng.choice([1.0, 2.0, 3.0, 7.3, 10.0], size=L) * float(
        rng.choice([1.0, 2.0 ** 30]))
    explicit = None
    kind = rng.random()
    if kind < 0.3:                  # some links over: scaled down
        explicit = np.where(rng.random(F) < 0.5,
                            rng.random(F) * 1.5 * cap.max(), np.nan)
    elif kind < 0.45:               # small: every link's fit (no scaling)
        explicit = np.where(rng.random(F) < 0.5,
                            rng.random(F) * cap.min() / max(F, 1), np.nan)
    elif kind < 0.5:                # given, none positive
        explicit = np.where(rng.random(F) < 0.5, 0.0, np.nan)
    return t, path, key, cap, explicit


@needs_kernels
def test_allocate_same_bits_as_numpy_on_random_inputs(monkeypatch):
    rng = np.random.default_rng(28)
    for _ in range(1500):
        args = _random_instance(rng)
        want_rate, want_load = numpy_allocate(monkeypatch, *args)
        rate, load = fluid.allocate(*args)
        assert np.array_equal(rate, want_rate), args
        assert np.array_equal(load, want_load), args


@needs_kernels
def test_reservations_that_fit_are_added_by_the_filling():
    # two flows on link 0 (capacity 10) reserve 3 and 4, a third (no
    # reservation) shares it; nothing is over capacity, so reserve
    # writes no rates and says so, and the filling adds 3 and 4 to the
    # max-min share of what is left (3 / 3 = 1 each): 4, 5 and 1. Where
    # they would not fit (3 and 9) it gives the scaled rates (10 / 12)
    t = np.array([[0], [0], [0]], np.int64)
    path = np.arange(3, dtype=np.int64)
    cap = np.array([10.0, np.inf])
    for x, scaled in (([3.0, 4.0, np.nan], None),
                      ([3.0, 9.0, np.nan], [2.5, 7.5, 0.0])):
        x = np.array(x)
        res = cap.copy()
        got = kernels.reserve(t, path, x, cap, res, fits=True)
        if scaled is None:
            assert got == 'fits' and res.tolist() == [3.0, np.inf]
            rate = kernels.maxmin(t, path, np.zeros(3, np.int64), res, cap,
                                  1e-9, add=x, add_explicit=True)
            assert rate.tolist() == [4.0, 5.0, 1.0]
        else:
            assert got.tolist() == scaled and res.tolist() == [0.0, np.inf]
        # without fits, the rates are given either way
        assert kernels.reserve(t, path, x, cap, cap.copy()).tolist() == \
            (scaled or [3.0, 4.0, 0.0])


def _fat_tree_paths(rng, n, ports):
    """A k=4 fat-tree's fluid.Network and the ECMP paths of up to n
    flows between random hosts (source ports drawn from ``ports``, a
    (low, high) pair; a flow from a host to itself is left out)."""
    from netsched import topology
    g = topology.fat_tree(4, link_bps=10e9)
    net = fluid.Network(g)
    hosts = topology.hosts(g)
    a, b = rng.integers(0, 16, n), rng.integers(0, 16, n)
    path = np.array([net.path_id(hosts[x], hosts[y], int(s), 80)
                     for x, y, s in zip(a, b, rng.integers(*ports, n))
                     if x != y], np.int64)
    return net, path


@needs_kernels
def test_allocate_same_bits_on_a_fat_tree(monkeypatch):
    # many rounds: 400 flows on random ECMP paths of a k=4 fat-tree
    rng = np.random.default_rng(5)
    net, path = _fat_tree_paths(rng, 400, (1000, 2000))
    # explicit rates (MADD's): some links oversubscribed, so scaled down
    x = np.where(rng.random(len(path)) < 0.7,
                 rng.random(len(path)) * 3e9, np.nan)
    for keys in (np.zeros(len(path), np.int64),
                 rng.integers(0, 8, len(path)),
                 rng.integers(0, 300, len(path))):
        for explicit in (None, x):
            args = (net.table(), path, keys, net.capacity, explicit)
            want = numpy_allocate(monkeypatch, *args)
            got = fluid.allocate(*args)
            assert np.array_equal(got[0], want[0])
            assert np.array_equal(got[1], want[1])


@needs_kernels
def test_step_kernels_same_bits_as_numpy():
    rng = np.random.default_rng(7)
    for _ in range(300):
        F, C = int(rng.integers(0, 80)), int(rng.integers(1, 9))
        rate = rng.random(F) * 1e9 * (rng.random(F) < 0.8)
        rem = rng.random(F) * 1e6 + 1e-7 * (rng.random(F) < 0.2)
        cof = rng.integers(0, C, F)
        if rng.random() < 0.5:
            cof = np.sort(cof)          # a coflow's flows together (runs)
        dt = float(rng.random() * 1e-2)
        # send: rem -= rate * dt / 8, per coflow summed as bincount does
        want_rem = rem - rate * dt / 8.0
        want_acc = np.bincount(cof, weights=rate * dt / 8.0, minlength=C)
        got_rem = rem.copy()
        acc = sim_kernels.send(rate, got_rem, cof, dt, C)
        assert np.array_equal(got_rem, want_rem)
        assert np.array_equal(acc, want_acc)
        # first finish: the smallest rem * 8 / rate of the moving flows
        moving = rate > 0
        found, t = sim_kernels.first_finish(rate, rem)
        assert found == bool(moving.any())
        if found:
            assert t == (rem[moving] * 8.0 / rate[moving]).min()
        # finish: FlowTable.finish's coalescing test, then the compaction
        start = rng.random(F) * 5.0
        now, tol, res = 5.0 + float(rng.random()), 1e-3, 1e-6
        window = np.maximum(tol * (now - start), res)
        done = rem <= np.maximum(rate * window / 8.0, 1e-6)
        pos = sim_kernels.done(rem, rate, start, now, tol, res)
        assert pos.tolist() == np.flatnonzero(done).tolist()
        # send then test, in one pass: the same as the two
        r2 = rem.copy()
        acc2, pos2 = sim_kernels.send_done(rate, r2, cof, dt, C, start, now,
                                       tol, res)
        assert np.array_equal(r2, want_rem)
        assert np.array_equal(acc2, want_acc)
        w2 = want_rem <= np.maximum(rate * window / 8.0, 1e-6)
        assert pos2.tolist() == np.flatnonzero(w2).tolist()
        # with the rate sums of the flows not done: numpy's over them
        r3 = rem.copy()
        acc3, pos3, rs = sim_kernels.send_done(rate, r3, cof, dt, C, start, now,
                                           tol, res, rate_sums=True)
        assert np.array_equal(acc3, want_acc) and np.array_equal(pos3, pos2)
        assert np.array_equal(rs, np.bincount(cof[~w2], weights=rate[~w2],
                                              minlength=C))
        ids = rng.permutation(F).astype(np.int64)
        want = [ids[~done], rem[~done], cof[~done]]
        cols = [ids.copy(), rem.copy(), cof.copy()]
        kept = sim_kernels.compact(cols, pos)
        for a, b, c in zip(kept, want, cols):
            assert np.array_equal(a, b)
            assert np.shares_memory(a, c) or not len(a)     # in place


@needs_kernels
def test_add_bytes_same_bits_as_numpy():
    # LinkMeter's bins += load * dt / 8, links without load skipped
    rng = np.random.default_rng(2)
    for _ in range(100):
        L = int(rng.integers(1, 50))
        load = rng.random(L) * 1e10 * (rng.random(L) < 0.6)
        bins = rng.random(L) * 1e6 * (rng.random(L) < 0.7)
        dt = float(rng.random())
        want = bins + load * dt / 8.0
        assert sim_kernels.add_bytes(load, dt, bins)
        assert np.array_equal(bins, want)
    # by hand: 8e9 bit/s for 0.5 s is 5e8 bytes
    b = np.zeros(2)
    sim_kernels.add_bytes(np.array([8e9, 0.0]), 0.5, b)
    assert b.tolist() == [5e8, 0.0]


@needs_kernels
def test_compact_by_hand():
    # rows 1 and 3 of 5 dropped: [10, 11, 12, 13, 14] -> [10, 12, 14],
    # row 0 (before the first dropped) left where it was
    a = np.arange(10, 15, dtype=np.int64)
    b = np.arange(5, dtype=np.float64) / 2
    kept = sim_kernels.compact([a, b], np.array([1, 3], np.int64))
    assert kept[0].tolist() == [10, 12, 14]
    assert kept[1].tolist() == [0.0, 1.0, 2.0]
    # a column given twice (shared memory) is refused: None, untouched
    c = np.arange(4, dtype=np.int64)
    assert sim_kernels.compact([c, c], np.array([0], np.int64)) is None
    assert c.tolist() == [0, 1, 2, 3]


def test_kernels_built_where_a_compiler_is():
    # an install on a machine with a C compiler (and CI's, always) must
    # have built the kernels (a failed build would otherwise only show as
    # the numpy path's slowness); netsched compiles nothing at run time,
    # so a stale install fails here until it is rebuilt (pip install
    # --no-build-isolation --no-deps -e ., as tools/bootstrap.sh does)
    import shutil
    ci = os.environ.get('CI', '').lower() == 'true'
    if not ci and not (os.environ.get('CC') or shutil.which('cc')
                       or shutil.which('gcc')):
        pytest.skip('no C compiler')
    if kernels.OFF:
        pytest.skip('NETSCHED_KERNELS=off')
    assert kernels.lib() is not None, kernels.why_not()
    assert sim_kernels.lib() is not None, sim_kernels.why_not()
    assert kernels.name() == sim_kernels.name() == 'c'


@needs_kernels
def test_nothing_compiled_at_run_time():
    # the kernels are loaded as built at install (CFFI modules beside
    # their sources), never compiled into a cache on first use
    import netsched.fluid._kernels as f
    import netsched.sim._kernels as s
    here = os.path.dirname(kernels.__file__)
    assert os.path.dirname(f.__file__) == here
    assert os.path.dirname(s.__file__) == os.path.dirname(
        sim_kernels.__file__)
    for m in (kernels, sim_kernels):
        src = open(m.__file__).read()
        assert 'subprocess' not in src and 'ctypes.CDLL' not in src


def test_off_switch_runs_numpy(monkeypatch):
    monkeypatch.setattr(kernels, 'OFF', True)
    assert kernels.lib() is None
    res = np.array([10.0, np.inf])
    assert kernels.maxmin(table([[0]]), np.zeros(1, np.int64),
                          np.zeros(1, np.int64), res, res.copy(),
                          fluid.REL_TOL) is None
    # and fluid.allocate still allocates (the numpy path): 10 / 2 each
    rate, _ = fluid.allocate(table([[0], [0]]), np.arange(2),
                             np.zeros(2, np.int64), np.array([10.0]))
    assert rate.tolist() == [5.0, 5.0]


def test_kernels_not_fed_arrays_they_cannot_read():
    # a strided view or a float coflow index goes the numpy way (None)
    a = np.arange(10.0)[::2]
    assert sim_kernels.first_finish(a, a) is None
    assert sim_kernels.send(np.ones(3), np.ones(3), np.zeros(3), 1.0,
                            1) is None


def test_rate_estimate_same_bits_as_its_row_by_row_form():
    # policies.base.rate_estimate goes hop by hop (per path where there
    # are fewer paths than flows); the slowest link per flow, and so the
    # estimate, is what gathering (F, H) rows and taking their minimum
    # gave
    from netsched.policies import base
    rng = np.random.default_rng(11)
    for _ in range(400):
        P, H, L = (int(x) for x in (rng.integers(1, 30), rng.integers(1, 5),
                                    rng.integers(1, 10)))
        F, C = int(rng.integers(0, 60)), int(rng.integers(1, 6))
        pl = np.full((P, H), -1, np.int64)
        for p in range(P):
            h = int(rng.integers(0, H + 1))
            pl[p, :h] = rng.integers(0, L, h)
        cap = rng.choice([1.0, 2.5, 1e9, 7.0], L)
        fp = rng.integers(0, P, F)
        fc = rng.integers(0, C, F)
        fc[:min(C, F)] = np.arange(min(C, F))
        snap = base.Snapshot(
            t=0.0, queues=None, link_capacity=cap, path_links=pl,
            flow_path=fp, flow_coflow=fc, flow_remaining=np.ones(F),
            flow_sent=np.zeros(F),
            flow_rate=rng.random(F) * (rng.random(F) < 0.5),
            coflow_id=tuple(str(i) for i in range(C)),
            coflow_arrival=np.zeros(C), coflow_sent=np.zeros(C))
        fl = snap.flow_links
        rows = np.where(fl >= 0, cap[np.maximum(fl, 0)], np.inf)
        slowest = rows.min(axis=1, initial=np.inf)
        slowest[~np.isfinite(slowest)] = 0.0
        top = np.bincount(fc, weights=slowest, minlength=C) / 8.0
        now = snap.coflow_rate() / 8.0
        want = np.where(now > 0, now, top)
        assert np.array_equal(base.rate_estimate(snap), want)


@needs_kernels
def test_maxmin_refuses_a_path_id_outside_the_table():
    # the kernel checks the ids as it scans the keys (it would read past
    # the (P, H) table): path 2 of a 2-path table, and -1
    for bad in (2, -1):
        res = np.array([1.0, 1.0])
        with pytest.raises(IndexError):
            kernels.maxmin(table([[0], [1]]), np.array([0, bad]),
                           np.zeros(2, np.int64), res, res.copy(),
                           fluid.REL_TOL)


@needs_kernels
def test_maxmin_starved_levels_by_hand():
    # link 0 (capacity 4) and link 1 (capacity 10); key 0: two flows on
    # link 0 get 2 each and fill it; key 1: a flow on links 0 and 1 is
    # starved (0: it crosses the full link 0), a flow on link 1 alone
    # gets all of it (10); key 2: another on link 1 gets 0
    rate, res = maxmin([[0], [0], [0, 1], [1], [1]], [0, 0, 1, 1, 2],
                       [4.0, 10.0])
    assert rate.tolist() == [2.0, 2.0, 0.0, 10.0, 0.0]
    assert res.tolist() == [0.0, 0.0]


@needs_kernels
def test_maxmin_same_rates_in_key_order_and_many_rounds(monkeypatch):
    # the kernel takes flows already in key order as they are, and
    # indexes a level's flows by link after a few rounds: the same
    # instance with its flows sorted by key (and the numpy code, which
    # groups flows by path) gives each flow the same bits; 60 flows of
    # one or two levels on a k=4 fat-tree need many rounds
    rng = np.random.default_rng(11)
    for _ in range(40):
        net, path = _fat_tree_paths(rng, int(rng.integers(1, 60)), (1, 9))
        key = rng.integers(0, int(rng.choice([1, 2, 4])), len(path))
        order = np.argsort(key, kind='stable')
        args = (net.table(), path, key, net.capacity, None)
        rate, load = fluid.allocate(*args)
        srate, sload = fluid.allocate(net.table(), path[order], key[order],
                                      net.capacity, None)
        want_rate, want_load = numpy_allocate(monkeypatch, *args)
        assert np.array_equal(srate, rate[order])
        assert np.array_equal(sload, load)
        assert np.array_equal(rate, want_rate)
        assert np.array_equal(load, want_load)


def test_rate_estimate_links_of_one_capacity_same_bits():
    # every link of one capacity and every path crossing one (a big
    # switch): the short cut gives what the hop-by-hop form gives, the
    # capacity summed per coflow in flow order (here 3 flows of coflow 0
    # at 2^30 bit/s, not sending: 3 * 2^30 / 8 bytes/s)
    from netsched.policies import base
    rng = np.random.default_rng(12)
    for _ in range(200):
        P, L = int(rng.integers(1, 30)), int(rng.integers(2, 10))
        F, C = int(rng.integers(1, 60)), int(rng.integers(1, 6))
        pl = np.stack([rng.integers(0, L, P), rng.integers(0, L, P)], 1)
        cap = np.full(L, float(rng.choice([1.0, 2.0 ** 30, 7.3])))
        fc = rng.integers(0, C, F)
        fc[:min(C, F)] = np.arange(min(C, F))
        snap = base.Snapshot(
            t=0.0, queues=None, link_capacity=cap, path_links=pl,
            flow_path=rng.integers(0, P, F), flow_coflow=fc,
            flow_remaining=np.ones(F), flow_sent=np.zeros(F),
            flow_rate=rng.random(F) * 0.3 * (rng.random(F) < 0.5),
            coflow_id=tuple(str(i) for i in range(C)),
            coflow_arrival=np.zeros(C), coflow_sent=np.zeros(C))
        top = np.bincount(fc, weights=np.full(F, cap[0]), minlength=C) / 8
        now = snap.coflow_rate() / 8.0
        assert np.array_equal(base.rate_estimate(snap),
                              np.where(now > 0, now, top))
    snap = base.Snapshot(
        t=0.0, queues=None, link_capacity=np.full(2, 2.0 ** 30),
        path_links=np.array([[0, 1]]), flow_path=np.zeros(3, np.int64),
        flow_coflow=np.zeros(3, np.int64), flow_remaining=np.ones(3),
        flow_sent=np.zeros(3), flow_rate=np.zeros(3), coflow_id=('a',),
        coflow_arrival=np.zeros(1), coflow_sent=np.zeros(1))
    assert base.rate_estimate(snap).tolist() == [3 * 2.0 ** 30 / 8]


def test_coflow_port_bytes_unpadded_paths_same_bits():
    # paths without padding take the unmasked form: the same sums in the
    # same (flow, hop) order as the masked one
    from netsched.policies import base
    rng = np.random.default_rng(13)
    for _ in range(200):
        P, L = int(rng.integers(1, 20)), int(rng.integers(2, 8))
        F, C = int(rng.integers(0, 80)), int(rng.integers(1, 5))
        pl = rng.integers(0, L, (P, 2))
        fp, fc = rng.integers(0, P, F), rng.integers(0, C, F)
        rem = rng.random(F) * 10.0 ** rng.integers(0, 9, F)
        snap = base.Snapshot(
            t=0.0, queues=None, link_capacity=np.ones(L), path_links=pl,
            flow_path=fp, flow_coflow=fc, flow_remaining=rem,
            flow_sent=np.zeros(F), flow_rate=np.zeros(F),
            coflow_id=tuple(str(i) for i in range(C)),
            coflow_arrival=np.zeros(C), coflow_sent=np.zeros(C))
        want = np.zeros((C, L))
        for f in range(F):                      # flow by flow, hop by hop
            for h in range(2):
                want[fc[f], pl[fp[f], h]] += rem[f]
        assert np.array_equal(snap.coflow_port_bytes(), want)


@needs_kernels
def test_coflow_sums_same_bits_as_numpy():
    # the simulator's snapshot sums per coflow compiled: the same bits as
    # the numpy bincounts of Snapshot, on flows whose coflows come in
    # runs or not, rates with zeros (skipped: +0.0 changes no sum), -0.0,
    # negatives and NaN, paths padded or not, pending sends
    from netsched.policies import base
    from netsched.sim.rates import SimSnapshot
    rng = np.random.default_rng(14)
    for _ in range(300):
        P, L, H = (int(rng.integers(1, 20)), int(rng.integers(2, 8)),
                   int(rng.integers(1, 4)))
        F, C, N = (int(rng.integers(0, 80)), int(rng.integers(1, 5)),
                   int(rng.integers(0, 6)))
        pl = rng.integers(-1 if rng.random() < 0.5 else 0, L, (P, H))
        fp = rng.integers(0, P, F)
        fc = rng.integers(0, C, F)
        if rng.random() < 0.5:
            fc = np.sort(fc)                    # a coflow's flows together
        rate = rng.random(F) * 10.0 ** rng.integers(0, 9, F)
        pick = rng.random(F)
        rate[pick < 0.4] = 0.0
        rate[(pick > 0.9) & (pick < 0.93)] = -0.0
        rate[(pick > 0.95) & (pick < 0.97)] *= -1.0
        if rng.random() < 0.1 and F:
            rate[int(rng.integers(0, F))] = np.nan
        fields = dict(
            t=0.0, queues=None, link_capacity=np.ones(L), path_links=pl,
            flow_path=fp, flow_coflow=fc, flow_remaining=rate.copy(),
            flow_sent=np.zeros(F), flow_rate=rate,
            coflow_id=tuple(str(i) for i in range(C)),
            coflow_arrival=np.zeros(C), coflow_sent=np.zeros(C),
            pending_path=rng.integers(0, P, N),
            pending_coflow=rng.integers(0, C, N),
            pending_bytes=rng.random(N) * 1e6)
        want, got = base.Snapshot(**fields), SimSnapshot(**fields)
        a, b = want.coflow_flows(), got.coflow_flows()
        assert a.dtype == b.dtype and np.array_equal(a, b)
        assert np.array_equal(base.rate_estimate(want),
                              base.rate_estimate(got), equal_nan=True)
        a, b = want.coflow_rate(), got.coflow_rate()
        assert np.array_equal(a, b, equal_nan=True)
        assert (np.signbit(a) == np.signbit(b)).all()
        for per_flow in (None, rate * 3.0):
            a = want.coflow_port_bytes(per_flow)
            b = got.coflow_port_bytes(per_flow)
            assert np.array_equal(a, b, equal_nan=True)
            assert (np.signbit(a) == np.signbit(b)).all()
    # a coflow index out of range: numpy's answer (here its error: the
    # sums do not fit C x L), not a sum written past the matrix
    bad = dict(fields, path_links=np.array([[0, 1]]))
    bad.update(flow_path=np.zeros(2, np.int64),
               flow_coflow=np.array([0, C]), flow_remaining=np.ones(2),
               flow_sent=np.zeros(2), flow_rate=np.ones(2),
               pending_path=np.zeros(0, np.int64),
               pending_coflow=np.zeros(0, np.int64),
               pending_bytes=np.zeros(0))
    with pytest.raises(ValueError):
        SimSnapshot(**bad).coflow_port_bytes()


def test_copies_summed_same_bits_as_weighted_bincount():
    # rate_estimate's count times x in place of x summed once per member:
    # the same bits wherever it is taken (x's significant bits and the
    # count's fit in 53), and the summed form elsewhere; by hand, 3
    # copies of 2^30 are 3 * 2^30, and 2^53 + 1 copies of 1.0 would not
    # fit (the sum stops at 2^53), so that case sums
    from netsched.policies.base import _copies_summed
    rng = np.random.default_rng(15)
    xs = [2.0 ** 30, 1e9, 7.3, 0.1, 3.0, 2.0 ** -20, 1e300, 5e-324,
          float(2 ** 52 - 1), float(2 ** 40 + 1), 0.0, -2.0]
    for x in xs:
        for F in (0, 1, 2, 3, 1000, 4096, 5000):
            g = rng.integers(0, 7, F)
            want = np.bincount(g, weights=np.full(F, x), minlength=5)
            got = _copies_summed(g, x, 5)
            assert got.dtype == want.dtype and np.array_equal(got, want), x
            # the groups given as a function (rate_estimate's way)
            late = _copies_summed(lambda: g, x, 5, size=F)
            assert np.array_equal(late, want), x
    assert _copies_summed(np.zeros(3, np.int64), 2.0 ** 30, 1).tolist() == [
        3 * 2.0 ** 30]


@needs_kernels
def test_util_text_same_as_repr_of_round():
    # LinkMeter's util body: "name":repr(round(u, 6)) per link, compiled;
    # by hand: 0.5 -> 0.5, 1 - 1e-9 -> 1.0, 1/128 = 0.0078125 (a tie at
    # the 7th decimal, to even) -> 0.007812, 1.23e-5 -> 1.2e-05,
    # 4e-6 -> 4e-06, 1e-7 -> 0.0
    import json
    names = [json.dumps(n) + ':' for n in ('h1->s1', 's1->h2', 'x')]
    ut = sim_kernels.UtilText(names)
    got = ut.text(np.array([0, 1, 2, 0, 1, 2], np.int64),
                  np.array([0.5, 1 - 1e-9, 1 / 128, 1.23e-5, 4e-6, 1e-7]))
    assert got == ('"h1->s1":0.5,"s1->h2":1.0,"x":0.007812,'
                   '"h1->s1":1.2e-05,"s1->h2":4e-06,"x":0.0')
    rng = np.random.default_rng(16)
    ties = np.arange(1, 3000) / 128.0
    steps = np.arange(1, 3000) * 1e-6 + 5e-7        # near the 6th decimal
    for u in [rng.random(3000) * 10.0 ** float(e) for e in range(-8, 10)] \
            + [ties, steps, np.nextafter(steps, 0), np.nextafter(steps, 1),
               1 - rng.random(3000) * 1e-9, 1 + rng.random(3000) * 1e-9]:
        idx = rng.integers(0, 3, len(u)).astype(np.int64)
        want = ','.join([names[i] + repr(round(x, 6))
                         for i, x in zip(idx.tolist(), u.tolist())])
        assert ut.text(idx, u) == want
    # outside its range (0, NaN, negative, 2^32 and up): None, the
    # caller writes repr's
    for bad in (0.0, np.nan, -1.0, 2.0 ** 32):
        assert ut.text(np.array([0], np.int64), np.array([bad])) is None


@needs_kernels
def test_flow_lines_same_as_python_writes_them():
    # the simulator's flow events, compiled: id, quoted coflow name,
    # hosts, repr(bytes) and repr(round(start, 9)); by hand: 1048576.0,
    # start 10.833 -> 10.833, 1/1024 = 0.0009765625 (a tie at the 10th
    # decimal, to even) -> 0.000976562, 1e-12 -> 0.0
    import json
    hosts = ['h0', 'h1', 'host-2']
    quoted = [json.dumps(n) for n in ('a', 'b "q" \u00e9', '3')]
    ft = sim_kernels.FlowText(hosts)
    head = FLOW_LINE.head(1.5)

    def python(ids, cof, src, dst, size, start):
        return ''.join(
            FLOW_LINE.line(head, i, quoted[c], hosts[s], hosts[d], repr(b),
                           repr(round(st, 9)))
            for i, c, s, d, b, st in zip(ids.tolist(), cof.tolist(),
                                         src.tolist(), dst.tolist(),
                                         size.tolist(), start.tolist()))

    def case(size, start, rng):
        n = len(size)
        return (np.arange(n, dtype=np.int64) * 7919,
                rng.integers(0, 3, n).astype(np.int64),
                rng.integers(0, 3, n).astype(np.int64),
                rng.integers(0, 3, n).astype(np.int64),
                np.asarray(size, float), np.asarray(start, float))
    rng = np.random.default_rng(18)
    one = case([1048576.0, 25165824.0, 1.0, 1.0], [10.833, 1 / 1024, 1e-12,
                                                  0.0], rng)
    assert ft.lines(head, *one, quoted) == python(*one)
    assert '"bytes":1048576.0,"start":10.833}' in python(*one)
    assert '"start":0.000976562}' in python(*one)
    steps = np.arange(1, 3000) * 1e-9 + 5e-10       # near the 9th decimal
    # (from 1e-4: repr writes an exponent below it)
    for st in [np.maximum(rng.random(3000) * 10.0 ** float(e), 1e-4)
               for e in range(-3, 7)] \
            + [np.arange(1, 3000) / 1024.0, 0.001 + steps,
               np.nextafter(0.001 + steps, 0), np.nextafter(0.001 + steps, 1),
               np.zeros(3000)]:
        size = np.floor(rng.random(len(st)) * 10.0 ** rng.integers(
            0, 16, len(st))) + 1
        c = case(size, st, rng)
        assert ft.lines(head, *c, quoted) == python(*c)
    # texts it does not know (bytes not whole or from 1e16, a start
    # rounding below 1e-4 but not to 0, negative, from 2^22): None
    for size, start in ((1.5, 1.0), (1e16, 1.0), (1.0, 5e-5),
                        (1.0, -1.0), (1.0, 2.0 ** 22), (1.0, -0.0)):
        assert ft.lines(head, *case([size], [start], rng), quoted) is None
    # coflows that arrive later: their names are appended
    quoted.append(json.dumps('late'))
    c = case([2.0], [1.0], rng)
    c[1][:] = 3
    assert ft.lines(head, *c, quoted) == python(*c)


@needs_kernels
def test_allocate_first_finish_as_first_finish_of_its_rates():
    # allocate(..., remaining) makes the first finish as it fills (or
    # as it adds the explicit reservations): the value first_finish
    # gives on the rates it returns; by hand, one flow of 100 bytes
    # alone on a 10 bit/s link: 100 * 8 / 10 = 80 s
    rng = np.random.default_rng(17)
    for _ in range(1500):
        t, path, key, cap, explicit = _random_instance(rng)
        rem = rng.random(len(path)) * 1e6 + 1.0
        rate, load, first = fluid.allocate(t, path, key, cap, explicit,
                                           remaining=rem)
        want_rate, want_load = fluid.allocate(t, path, key, cap, explicit)
        assert np.array_equal(rate, want_rate)
        assert np.array_equal(load, want_load)
        if not len(path):
            continue
        assert first == sim_kernels.first_finish(rate, rem)
    rate, _, first = fluid.allocate(table([[0]]), np.array([0]),
                                    np.zeros(1, np.int64), np.array([10.0]),
                                    remaining=np.array([100.0]))
    assert rate.tolist() == [10.0] and first == (True, 80.0)


@needs_kernels
def test_maxmin_runs_counting_and_argsort_orders(monkeypatch):
    # the kernel's three ways to the key order: flows in few runs of
    # equal keys (filled run by run), many runs of a narrow key range
    # (counting sort), many runs of a wide one (numpy's argsort): each
    # gives numpy's bits; 600 flows on a k=4 fat-tree
    from netsched import topology
    g = topology.fat_tree(4, link_bps=10e9)
    net = fluid.Network(g)
    hosts = topology.hosts(g)
    rng = np.random.default_rng(18)
    pairs = [(a, b) for a, b in zip(rng.integers(0, 16, 700),
                                    rng.integers(0, 16, 700)) if a != b]
    path = np.array([net.path_id(hosts[a], hosts[b], int(s), 80)
                     for (a, b), s in zip(pairs[:600],
                                          rng.integers(1000, 2000, 600))])
    few = np.repeat(rng.permutation(12), 50)[:len(path)]   # 12 runs
    for keys in (few, few * 10 ** 9, rng.integers(0, 20, len(path)),
                 rng.integers(0, 20, len(path)) * 10 ** 9):
        for explicit in (None, np.where(rng.random(len(path)) < 0.5,
                                        rng.random(len(path)) * 5e9,
                                        np.nan)):
            args = (net.table(), path, keys, net.capacity, explicit)
            want = numpy_allocate(monkeypatch, *args)
            got = fluid.allocate(*args)
            assert np.array_equal(got[0], want[0])
            assert np.array_equal(got[1], want[1])


def test_full_rank_small_same_as_lexsort():
    # full_rank sorts a few coflows in Python: the dense ranks lexsort
    # gives, on ties in both keys, -0.0 against 0.0 and large ranks; by
    # hand: ranks (1, 0, 1) with orders (5, 9, 2) -> (2, 0, 1)
    from netsched.policies import base
    d = base.Decision(coflow_rank=np.array([1, 0, 1]),
                      coflow_order=np.array([5.0, 9.0, 2.0]))
    assert base.full_rank(d).tolist() == [2, 0, 1]
    rng = np.random.default_rng(19)
    for _ in range(2000):
        C = int(rng.integers(0, base.SMALL_RANK + 1))
        rank = rng.integers(0, int(rng.choice([1, 3, 10 ** 12])), C)
        order = rng.choice([0.0, -0.0, 1.5, 2.0, 1e9], C) if rng.random() \
            < 0.5 else rng.integers(0, 5, C).astype(float)
        for o in (order, None):
            d = base.Decision(coflow_rank=rank, coflow_order=o)
            got = base.full_rank(d)
            want = base._full_rank_arrays(
                np.asarray(rank, np.int64),
                np.zeros(C) if o is None else o)
            assert got.dtype == want.dtype and np.array_equal(got, want)
