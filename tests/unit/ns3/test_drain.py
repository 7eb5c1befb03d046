"""The ns-3 plan driver holds a connection's next transfer as the agents'
senders do (host.transport, Transport._drain): one of another coflow in
another class, or of a coflow not classed yet, starts only once the
connection's earlier transfers are received. No ns-3 needed: the
driver's bookkeeping alone, on stand-ins for the engine and the
controller."""
from types import SimpleNamespace

import numpy as np

from netsched.ns3.engine import ReportingPlan
from netsched.sim.drivers import PlanDriver


def send(id, coflow, conn=0):
    return SimpleNamespace(id=id, coflow=coflow, conn=conn, job='j',
                           prophet=None)


def driver(monkeypatch, waits=True, drain=True, classes=None):
    """A ReportingPlan without a plan: what it starts is recorded."""
    d = ReportingPlan.__new__(ReportingPlan)
    d.control = SimpleNamespace(send_class={}, coflow_class=dict(classes or {}),
                                waits=waits)
    d.drain, d.unacked, d.parked, d.failed = drain, {}, {}, set()
    d.eng = SimpleNamespace(flow_tag=[])
    started = []
    monkeypatch.setattr(PlanDriver, '_start_send',
                        lambda self, t: started.append(t.id))
    monkeypatch.setattr(PlanDriver, 'on_flows_sent', lambda self, ids: None)
    monkeypatch.setattr(PlanDriver, 'on_flows_done', lambda self, ids: None)
    return d, started


def written(d, t):
    d.eng.flow_tag.append(t)
    d.on_flows_sent(np.array([len(d.eng.flow_tag) - 1]))
    return len(d.eng.flow_tag) - 1


def test_a_new_coflow_waits_until_the_last_one_is_received(monkeypatch):
    d, started = driver(monkeypatch, classes={'a/0': 7})
    fid = written(d, send(1, 'a/0'))
    d._start_send(send(2, 'a/1'))          # not classed yet: it waits
    assert started == []
    d.on_flows_done(np.array([fid]))
    assert started == [2]


def test_the_same_coflow_or_class_goes_at_once(monkeypatch):
    d, started = driver(monkeypatch, classes={'a/0': 3, 'b/0': 3})
    written(d, send(1, 'a/0'))
    d._start_send(send(2, 'a/0'))
    d._start_send(send(3, 'b/0', conn=0))
    assert started == [2, 3]


def test_a_class_that_comes_ends_the_wait(monkeypatch):
    d, started = driver(monkeypatch, classes={'a/0': 3})
    written(d, send(1, 'a/0'))
    d._start_send(send(2, 'b/0'))
    assert started == []
    d.control.coflow_class['b/0'] = 3
    d.unpark()
    assert started == [2]


def test_drain_off_or_no_classes_never_waits(monkeypatch):
    d, started = driver(monkeypatch, drain=False, classes={'a/0': 7})
    written(d, send(1, 'a/0'))
    d._start_send(send(2, 'a/1'))
    # a policy that classes nothing: every transfer is in class 0
    e, started_e = driver(monkeypatch, waits=False)
    written(e, send(1, 'a/0'))
    e._start_send(send(2, 'a/1'))
    assert started == [2] and started_e == [2]
