"""The coordinator's parts that need no emulator (emulator.runner):
transfers logged once both their start and end are known, in either
order, and the agents' totals at their bye."""
from types import SimpleNamespace as NS

from netsched.emulator.runner import Byes, Transfers


class Log:
    def __init__(self):
        self.lines = []

    def write(self, t, ev, **kw):
        self.lines.append((round(t, 9), ev, kw))


def send(i, coflow):
    return NS(id=i, coflow=coflow, job='j', iter=0, host='h0', dst='h1',
              bytes=100, urgency=None)


def test_a_transfer_is_logged_when_start_and_end_are_known():
    sends = {0: send(0, 'c'), 1: send(1, 'c')}
    plan = NS(coflow_bytes={'c': 200}, instant_coflows={})
    log = Log()
    tr = Transfers(plan, sends, log)
    t0 = 100.0
    tr.recv(sends[0], {'t': 103.0, 'first': 101.5}, t0)   # end read first
    assert tr.done == 0 and log.lines == []
    tr.start(sends[0], {'ready': 100.5, 't': 101.0}, t0)
    assert tr.done == 1 and tr.received == {0}
    assert log.lines[0][:2] == (3.0, 'flow')
    assert log.lines[0][2]['start'] == 1.0
    assert log.lines[0][2]['first_read'] == 1.5
    tr.start(sends[1], {'ready': 100.2, 't': 101.2}, t0)
    tr.recv(sends[1], {'t': 104.0}, t0)
    # the coflow: arrived at its first send's ready, ended at its last
    assert [x[:2] for x in log.lines[2:]] == [(0.2, 'coflow'),
                                             (4.0, 'coflow_end')]


def test_an_unfinished_coflow_is_logged_without_an_end():
    sends = {0: send(0, 'c')}
    plan = NS(coflow_bytes={'c': 100, 'i': 0}, instant_coflows={'i': 1.0})
    log = Log()
    tr = Transfers(plan, sends, log)
    tr.start(sends[0], {'ready': 10.5, 't': 11.0}, 10.0)
    tr.log_open(5.0, 10.0)
    assert [x[:2] for x in log.lines] == [(1.0, 'coflow'),
                                         (1.0, 'coflow_end'),
                                         (0.5, 'coflow')]


def test_byes_sum_the_agents_tcp_figures():
    b = Byes()
    b.add('h0', {'cpu_s': 1.0, 'retrans': 2, 'retrans_by_conn': {'0': 2},
                 'rto_by_conn': {'0': [1, 0.2]}, 'timeouts': 1,
                 'tcp_cc': 'cubic', 'paused_by_conn': {'0': 0.5},
                 'tcp_counters': {'TCPTimeouts': 1, 'TCPSpuriousRTOs': 1,
                                  'TCPDSACKRecv': 3}})
    b.add('h1', {'cpu_s': 2.0, 'retrans_by_conn': {'1': 0}})
    info = b.tcp_info()
    assert b.cpu == {'h0': 1.0, 'h1': 2.0}
    assert info['tcp_retransmits'] == 2
    assert info['tcp_retransmits_by_connection'] == {'h0#0': 2}
    assert info['tcp_timeouts_by_connection'] == {'h0#0': 1}
    assert info['tcp_rto_recovery_s_by_connection'] == {'h0#0': 0.2}
    assert info['tcp_timeouts_by_host'] == {'h0': 1, 'h1': None}
    # h1's kernel did not say: the sums are of those that did
    assert (info['tcp_spurious_rtos'], info['tcp_dsacks']) == (1, 3)
    assert Byes().tcp_info()['tcp_spurious_rtos'] is None
    assert info['tcp_congestion_control'] == 'cubic'
    assert b.paused_by_conn == {'h0#0': 0.5}
