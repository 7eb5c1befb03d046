"""Running an experiment on ns-3: the topology graph at its data-center
rates, the plan's connections as TCP, the controller's core in the loop,
the event log as the other backends write it."""
import os
import time

from .. import fluid, policies
from ..events import EventLog
from ..sim import runner as sim_runner
from ..workload import bounds, taskgraph
from . import loader
from .engine import Control, Engine, ReportingPlan
from .fabric import IP_HEADERS, Fabric

# the hosts' TCP as the emulator's agents have it (netsched.host.transport
# and the Debian kernel's defaults): what ns-3 is told
CONGESTION = {'bbr': 'ns3::TcpBbr', 'cubic': 'ns3::TcpCubic',
              'newreno': 'ns3::TcpNewReno', 'dctcp': 'ns3::TcpDctcp'}
MIN_RTO_S = 0.2              # Linux's TCP_RTO_MIN
DELACK_S = 0.04              # Linux's TCP_DELACK_MIN
INITIAL_CWND = 10            # segments (Linux's TCP_INIT_CWND)
SOCKET_BUFFER = 6 * 1024 * 1024   # Linux's tcp_wmem / tcp_rmem maximum


class Progress(sim_runner.Progress):
    """The simulator's progress report, counting ns-3's transfers."""

    def __init__(self, say, total, bar=None):
        super().__init__(say, total, bar, every_s=5.0)

    def done(self, eng):
        return len(eng.flow_tag) - len(eng._active)

    def line(self, eng):
        return ('ns-3 t=%.3f s: %d of %d transfers received, %d in flight'
                % (eng.now, self.done(eng), self.total, len(eng._active)))


def configure_tcp(ns, seg, cc, max_rate_bps, ecn=False, seed=1):
    """ns-3's TCP defaults for a run (they hold until the process ends or
    they are set again, so every run sets all of them): ``seg`` bytes a
    segment, congestion control TypeId ``cc``."""
    d = ns.Config.SetDefault
    d('ns3::TcpL4Protocol::SocketType', ns.TypeIdValue(
        ns.TypeId.LookupByName(cc)))
    d('ns3::TcpSocket::SegmentSize', ns.UintegerValue(seg))
    d('ns3::TcpSocket::InitialCwnd', ns.UintegerValue(INITIAL_CWND))
    d('ns3::TcpSocket::SndBufSize', ns.UintegerValue(SOCKET_BUFFER))
    d('ns3::TcpSocket::RcvBufSize', ns.UintegerValue(SOCKET_BUFFER))
    d('ns3::TcpSocket::DelAckTimeout', ns.TimeValue(ns.Seconds(DELACK_S)))
    d('ns3::TcpSocketBase::MinRto', ns.TimeValue(ns.Seconds(MIN_RTO_S)))
    # BBR paces by design (Linux's fq or its internal pacing): ns-3's BBR
    # without pacing sends its window in bursts and runs far below the link
    d('ns3::TcpSocketState::EnablePacing',
      ns.BooleanValue(cc == CONGESTION['bbr']))
    # ns-3 caps pacing at 4 Gbit/s by default; the hosts' NICs are the cap
    d('ns3::TcpSocketState::MaxPacingRate', ns.DataRateValue(ns.DataRate(
        int(max_rate_bps))))
    d('ns3::TcpSocketBase::UseEcn', ns.StringValue('On' if ecn else 'Off'))
    ns.RngSeedManager.SetSeed(max(1, int(seed)))


def run(exp, log_path, say, bar=None):
    """Run ``exp`` on ns-3, its event log into ``log_path``."""
    ns, core = loader.load()
    cfg = exp.ns3
    core.ResetRun()
    g = exp.graph()
    seg = exp.mtu - IP_HEADERS
    configure_tcp(ns, seg, CONGESTION['dctcp' if cfg.ecn
                                      else cfg.congestion_control],
                  max(d['capacity_bps'] for _, _, d in g.edges(data=True)),
                  ecn=cfg.ecn, seed=exp.seed)
    net = fluid.Network(g)
    policy = policies.make(exp.policy, exp.policy_params)
    plan = taskgraph.build(exp)
    total = sum(1 for t in plan.tasks if t.kind == 'send')
    say('%d jobs, %d tasks, %d connections; ns-3 %s, %s, control delay '
        '%g ms' % (len(plan.jobs), len(plan.tasks), len(plan.conns),
                   loader.version(),
                   'DCTCP/ECN' if cfg.ecn else cfg.congestion_control,
                   cfg.control_delay_s * 1e3))
    t0 = time.monotonic()
    try:
        fab = Fabric(ns, core, g, queues=exp.queues,
                     queue_packets=exp.queue_packets * max(1,
                                                           exp.fair_queues),
                     mtu=exp.mtu,
                     ce_threshold_s=cfg.ce_threshold_s if cfg.ecn else 0.0)
        with EventLog(log_path) as log:
            log.write(0.0, 'run_start', backend='ns3', policy=exp.policy,
                      seed=exp.seed)
            for j, p in sorted(plan.placements.items()):
                log.write(0.0, 'placement', job=j, **p)
            eng = Engine(ns, core, fab, net, log, sample_s=exp.sample_s,
                         progress=Progress(say, total, bar))
            ctl = eng.control = Control(
                eng, g, plan, policy, exp.queues, cfg.control_delay_s,
                class_map=exp.class_map,
                hold_starved=exp.knobs.hold_starved,
                release_floor=exp.knobs.floor_release)
            ctl.register('ns3-%d' % exp.seed)
            eng.open(plan, seg)
            driver = ReportingPlan(plan, ctl, drain=exp.knobs.drain)
            if exp.faults:
                from .faults import schedule
                schedule(eng, exp.faults, driver)
            if exp.circuits is not None:
                from ..sim.circuits import WithCircuits
                from .circuits import Circuits
                driver = WithCircuits(driver, Circuits(g, exp.circuits,
                                                       driver))
            # the simulator's limits on events and log size (time: the
            # timeout_s run.execute derived, or the experiment's)
            eng.limits = bounds.limits(
                exp, out_dir=os.path.dirname(os.path.abspath(log_path)))
            eng.run(driver, until=exp.timeout_s)
            if eng.stopped is not None:
                say('stopped: %s' % eng.stopped)
                log.write(eng.now, 'run_incomplete', cause='limit',
                          why=eng.stopped)
            elif exp.timeout_s is not None and eng.busy():
                log.write(eng.now, 'run_incomplete', cause='timeout',
                          why='timeout_s %g reached' % exp.timeout_s)
            trouble = core.GetTrouble()
            packets = {'retransmits': int(trouble.retransmits),
                       'timeouts': int(trouble.timeouts),
                       'fast_recoveries': int(trouble.recoveries),
                       'packet_hops': fab.packet_hops(),
                       'ports': fab.port_stats()}
            packets['drops'] = sum(p['drops']
                                   for p in packets['ports'].values())
            log.write(eng.now, 'packets', **packets)
            log.write(eng.now, 'run_end', events=eng.events,
                      decisions=ctl.decisions)
        return {'events': eng.events, 'decisions': ctl.decisions,
                'packets': packets,
                'ns3': {'control_delay_s': cfg.control_delay_s,
                        'congestion_control': 'dctcp' if cfg.ecn
                        else cfg.congestion_control,
                        'segment_bytes': seg,
                        'wall_s': round(time.monotonic() - t0, 3)}}
    finally:
        ns.Simulator.Destroy()
