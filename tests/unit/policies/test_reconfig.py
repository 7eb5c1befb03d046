"""The steps of a circuit reconfiguration (issue 13), shared by both
backends: ToRs leave the circuits that go before the OCS drops them,
nothing is joined before the blackout ends, ToRs enter the new circuits
only once the OCS has joined them, and each step waits for the last."""
import pytest

from netsched.circuits.reconfig import Reconfig

A, B, C = (0, 0, 1), (0, 0, 2), (1, 0, 1)


def run(r, wanted, now, confirm_after=0.001):
    """Drive a reconfiguration to its end, confirming each action
    ``confirm_after`` after it was issued; returns [(t, kind, set)]."""
    seen = []
    acts = r.start(wanted, now)
    t = now
    while not r.idle:
        if not acts:
            t = r.wake_at
            acts = r.wake(t)
            continue
        a = acts[0]
        seen.append((round(t, 6), a.kind, a.circuits))
        t += confirm_after
        acts = r.done(a.token, t)
    return seen


def test_a_first_circuit_waits_for_the_blackout_then_carries_traffic():
    r = Reconfig(0.010)
    assert run(r, {A}, 0.0) == [(0.01, 'add', {A}), (0.011, 'route', {A})]
    assert r.live == r.routed == {A} and r.since == {A: 0.011}
    assert r.reconfigurations == 1


def test_a_swap_leaves_drops_waits_joins_and_enters_in_order():
    r = Reconfig(0.010, live={A})
    steps = run(r, {B, C}, 1.0)
    assert steps == [(1.0, 'route', frozenset()), (1.001, 'remove', {A}),
                     (1.012, 'add', {B, C}), (1.013, 'route', {B, C})]
    # the blackout is the delay after the OCS dropped the old circuit
    assert steps[2][0] - steps[1][0] == pytest.approx(0.001 + 0.010)


def test_circuits_that_stay_are_never_left():
    r = Reconfig(0.010, live={A, B})
    steps = run(r, {A, (1, 1, 2)}, 0.0)
    assert steps[0] == (0.0, 'route', {A})          # B's racks leave
    assert all(A in s for t, k, s in steps if k == 'route')
    assert r.live == {A, (1, 1, 2)}


def test_only_removing_has_no_blackout_and_nothing_changing_does_nothing():
    r = Reconfig(0.010, live={A, B})
    assert run(r, {A}, 0.0) == [(0.0, 'route', {A}), (0.001, 'remove', {B})]
    assert r.start({A}, 5.0) == [] and r.idle


def test_one_reconfiguration_at_a_time_and_stale_confirmations():
    r = Reconfig(0.010, live={A})
    acts = r.start({B}, 0.0)
    with pytest.raises(ValueError):
        r.start({C}, 0.0)
    assert r.done(acts[0].token + 7, 0.001) == []   # not the pending one
    assert r.wake(0.5) == []                       # not in a blackout
    assert r.done(acts[0].token, 0.001)[0].kind == 'remove'
