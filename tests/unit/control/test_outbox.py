"""One batch of FlowMods in flight per switch (control.outbox): what comes
meanwhile waits for the barrier, merged by rule (later wins, in the place
the rule first had), never across a non-strict delete."""
from netsched.control import openflow as of
from netsched.control.outbox import Outbox


def fm(match, out=1, command='add', priority=100):
    return of.FlowMod(1, priority, (('ipv4_dst', match),),
                      () if command != 'add' else (('output', out),),
                      command=command)


def test_a_batch_goes_at_once_then_the_next_waits_for_its_barrier():
    box, calls = Outbox(), []
    assert box.offer(7, [fm('10.0.0.1')], lambda: calls.append('a')) == \
        [fm('10.0.0.1')]
    assert box.offer(7, [fm('10.0.0.2')], lambda: calls.append('b')) is None
    assert box.offer(8, [fm('10.0.0.3')]) == [fm('10.0.0.3')]  # own switch
    assert box.waiting(7) == 1
    dones, nxt = box.confirmed(7)
    [d() for d in dones]
    assert calls == ['a'] and nxt == [fm('10.0.0.2')]
    dones, nxt = box.confirmed(7)
    [d() for d in dones]
    assert calls == ['a', 'b'] and nxt is None
    # nothing in flight: the next goes at once
    assert box.offer(7, [fm('10.0.0.4')]) == [fm('10.0.0.4')]


def test_a_rule_rewritten_while_waiting_is_sent_once_in_its_last_form():
    box = Outbox()
    box.offer(1, [fm('10.0.0.9')])
    box.offer(1, [fm('10.0.0.1', out=1), fm('10.0.0.2', out=1)])
    box.offer(1, [fm('10.0.0.1', out=2),
                  fm('10.0.0.2', command='delete_strict'),
                  fm('10.0.0.1', out=3, priority=50)])
    _, nxt = box.confirmed(1)
    assert nxt == [fm('10.0.0.1', out=2),
                   fm('10.0.0.2', command='delete_strict'),
                   fm('10.0.0.1', out=3, priority=50)]


def test_nothing_is_merged_across_a_non_strict_delete():
    box = Outbox()
    box.offer(1, [fm('10.0.0.9')])
    wipe = of.FlowMod(1, 0, (), (), command='delete')
    box.offer(1, [fm('10.0.0.1', out=1), wipe, fm('10.0.0.1', out=2)])
    box.offer(1, [fm('10.0.0.1', out=3)])
    _, nxt = box.confirmed(1)
    assert nxt == [fm('10.0.0.1', out=1), wipe, fm('10.0.0.1', out=3)]


def test_a_switch_that_goes_away_is_forgotten():
    box = Outbox()
    box.offer(1, [fm('10.0.0.1')], lambda: None)
    box.offer(1, [fm('10.0.0.2')])
    box.drop(1)
    assert box.waiting(1) == 0 and box.confirmed(1) == ([], None)
    assert box.offer(1, [fm('10.0.0.3')]) == [fm('10.0.0.3')]


def test_a_barrier_never_answered_stops_holding_the_next_batch():
    box, calls = Outbox(), []
    box.offer(1, [fm('10.0.0.1')], lambda: calls.append('lost'), now=0.0)
    box.offer(1, [fm('10.0.0.2')], lambda: calls.append('next'), now=1.0)
    box.offer(2, [fm('10.0.0.3')], now=9.0)
    assert box.overdue(5.0, 10.0) == []
    assert box.overdue(10.5, 10.0) == [1]
    assert box.expire(1, now=10.5) == [fm('10.0.0.2')]
    assert calls == [] and box.overdue(10.5, 10.0) == []
    # the released batch is in flight now, timed from its release
    assert box.overdue(20.0, 10.0) == [2]
    dones, nxt = box.confirmed(1, now=20.0)
    [d() for d in dones]
    assert calls == ['next'] and nxt is None
