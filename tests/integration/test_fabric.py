"""A k=4 fat-tree at 20 Mbit/s: reachability, throughput, strict priority."""
import pytest

from netsched.emulator import measure
from netsched.control.spec import ControllerSpec
from netsched.emulator.fabric import Fabric
from netsched.topology import fat_tree

from .helpers import leftovers

RATE = 20e6


@pytest.fixture(scope='module')
def fab():
    g = fat_tree(4)
    f = Fabric(ControllerSpec.for_link(g, RATE / 1e6, queues=8))
    with f:
        pids = [(p['pid'], p['start']) for p in f.state.data['pids']]
        yield f
    assert leftovers(g, pids) == []


def test_every_host_pair_reachable(fab):
    assert measure.reachability(fab) == []


def test_cross_pod_tcp_reaches_90_percent_of_link_rate(fab):
    f = measure.Flow('h0_0_0', 'h3_1_1', 41001, 5301, 5)
    measure.run_iperf(fab, [f])
    assert f.mean_bps(skip_s=1) >= 0.90 * RATE, f.series_bps


def test_strict_priority_between_two_classes(fab):
    high = measure.Flow('h0_0_0', 'h3_1_1', 42001, 5401, 5, start_s=2)
    low = measure.Flow('h1_0_0', 'h3_1_1', 42002, 5402, 12)
    with fab.client() as c:
        c.set_class({'ipv4_src': fab.ip('h0_0_0'), 'tcp_dst': 5401}, 0)
        c.set_class({'ipv4_src': fab.ip('h1_0_0'), 'tcp_dst': 5402}, 7)
        try:
            measure.run_iperf(fab, [high, low])
        finally:
            c.clear_class()
    both = high.mean_bps(skip_s=1)               # high runs t=2..7
    assert both >= 0.85 * RATE, (high.series_bps, low.series_bps)
    assert low.mean_bps(skip_s=3, until_s=6) <= 0.10 * RATE, low.series_bps
    assert low.mean_bps(skip_s=8) >= 0.85 * RATE, low.series_bps
