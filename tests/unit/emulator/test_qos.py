import pytest

from netsched import qos
from netsched.emulator import tc
from netsched.errors import ConfigError


def test_class_to_dscp():
    assert [qos.class_dscp(c) for c in range(8)] == \
        [56, 48, 40, 32, 24, 16, 8, 0]
    assert qos.class_dscp(0, 4) == 56 and qos.class_dscp(3, 4) == 32


@pytest.mark.parametrize('dscp,q,cls', [
    (56, 8, 0), (48, 8, 1), (0, 8, 7), (46, 8, 2),   # EF = precedence 5
    (0, 4, 3), (56, 4, 0), (40, 4, 2), (32, 4, 3), (8, 4, 3), (63, 2, 0),
    (0, 1, 0), (56, 1, 0)])
def test_dscp_to_class(dscp, q, cls):
    assert qos.dscp_class(dscp, q) == cls


def test_round_trip_every_class():
    for q in range(1, 9):
        for c in range(q):
            assert qos.dscp_class(qos.class_dscp(c, q), q) == c


def test_rank_class():
    assert [qos.rank_class(r, 4) for r in range(7)] == [0, 1, 2, 3, 3, 3, 3]


@pytest.mark.parametrize('q', [0, 9, -1, 2.5, True])
def test_bad_queue_count(q):
    with pytest.raises(ConfigError, match='queues'):
        qos.check_queues(q)


def test_bad_class_and_dscp():
    with pytest.raises(ConfigError, match='class must be'):
        qos.class_dscp(4, 4)
    with pytest.raises(ConfigError, match='DSCP'):
        qos.dscp_class(64)


def test_tc_batch_strict_priority_tree():
    lines = tc.tc_batch('s1-eth3', 20e6, 4, 9000, 32, probe_port=None)
    assert lines[0] == 'qdisc add dev s1-eth3 root handle 1: htb default 13'
    classes = [l for l in lines if l.startswith('class add') and 'parent 1:1 ' in l]
    assert len(classes) == 4
    for c, line in enumerate(classes):
        assert 'classid 1:%d' % (10 + c) in line and ' prio %d ' % c in line
        assert 'ceil 20000000bit' in line
        # no guaranteed rate to speak of: a class within it would be
        # served ahead of every higher class (tc module docstring)
        assert 'rate 8bit ' in line and ' burst 1 ' in line
    leaves = [l for l in lines if 'pfifo limit 32' in l]
    assert len(leaves) == 4
    filters = [l for l in lines if l.startswith('filter')]
    # the lowest class is the default: no filter for it
    assert [f.split('tos ')[1] for f in filters] == [
        '0xe0 0xe0 flowid 1:10', '0xc0 0xe0 flowid 1:11',
        '0xa0 0xe0 flowid 1:12']


def test_tc_batch_probes_have_a_class_above_every_other():
    """The fidelity probes (UDP to qos.PROBE_PORT) get prio 0 with a
    small guaranteed rate, so htb sends them ahead of every scheduling
    class, which borrow; their filter is read before the DSCP ones."""
    lines = tc.tc_batch('s1-eth3', 20e6, 4, 9000, 32)
    probe = [l for l in lines if 'classid 1:9 ' in l]
    assert probe == ['class add dev s1-eth3 parent 1:1 classid 1:9 htb '
                     'rate 200000bit ceil 20000000bit burst 9014 cburst '
                     '18028 prio 0 quantum 9014']
    filters = [l for l in lines if l.startswith('filter')]
    assert filters[0] == (
        'filter add dev s1-eth3 parent 1: protocol ip prio 1 u32 match ip '
        'protocol 17 0xff match ip dport %d 0xffff flowid 1:9'
        % qos.PROBE_PORT)
    assert all(' prio 2 ' in f for f in filters[1:])
    # a single class keeps the link to itself, less the probes' share
    one = tc.tc_batch('x', 10e6, 1, 1500, 100)
    assert 'classid 1:10 htb rate 9900000bit ceil 10000000bit' in one[5]
    assert tc.probe_rate_bps(1e6) == 64e3


def test_tc_batch_single_class_is_fifo():
    lines = tc.tc_batch('x', 10e6, 1, 1500, 100, probe_port=None)
    assert not [l for l in lines if l.startswith('filter')]
    assert 'rate 10000000bit ceil 10000000bit' in lines[2]


def test_tc_batch_fair_buckets_hash_the_source_port():
    lines = tc.tc_batch('p', 20e6, 2, 9000, 32, 4)
    # the default class is a leaf: bucket 0 of the lowest class
    assert lines[0] == 'qdisc add dev p root handle 1: htb default 110'
    leaves = [l for l in lines if l.startswith('class add')
              and 'parent 1:1 ' not in l and 'parent 1: ' not in l]
    assert [l.split('classid ')[1].split()[0] for l in leaves] == [
        '1:100', '1:101', '1:102', '1:103', '1:110', '1:111', '1:112',
        '1:113']
    for l in leaves:                  # same prio as their class
        cls = int(l.split('classid 1:')[1].split()[0], 16)
        assert ' prio %d ' % ((cls - 0x100) >> 4) in l
        # and they borrow all they send: no leaf of a lower class goes
        # ahead of a higher class on a guaranteed rate of its own
        assert 'rate 8bit ceil 20000000bit burst 1 ' in l
    assert sum('pfifo limit 32' in l for l in lines) == 8
    link = [l for l in lines if 'hashkey' in l]
    assert link == [
        'filter add dev p parent 1:10 protocol ip prio 1 u32 match ip '
        'protocol 6 0xff hashkey mask 0x00030000 at 20 link 100:',
        'filter add dev p parent 1:11 protocol ip prio 1 u32 match ip '
        'protocol 6 0xff hashkey mask 0x00030000 at 20 link 101:']
    assert 'filter add dev p parent 1:11 protocol ip prio 1 u32 ht 101:2: ' \
        'match u32 0 0 flowid 1:112' in lines


def test_tc_batch_rejects_odd_bucket_counts():
    with pytest.raises(ConfigError, match='fair_queues must be 0 or one of'):
        tc.tc_batch('p', 20e6, 2, 9000, 32, 3)
