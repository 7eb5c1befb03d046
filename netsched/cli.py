"""The `netsched` command."""
import argparse
import dataclasses
import json
import os
import signal
import sys
import time

from . import __version__
from . import routing
from . import topology as topo
from .control.channel import DEFAULT_SOCKET
from .errors import NetschedError
from .pipeline.metrics import TOTALS


def _fabric_args(p, default_topology='fattree,4'):
    p.add_argument('--topology', default=default_topology,
                   help="topology spec, Mininet style (default %(default)s;"
                        " also leafspine,L,S,H and dumbbell,N)")
    p.add_argument('--link-mbps', type=float, default=20.0,
                   help='emulated rate of the fastest link (default 20)')
    p.add_argument('--queues', type=int, default=8,
                   help='strict-priority classes per port (1..8, default 8)')
    p.add_argument('--mtu', type=int, default=9000)
    p.add_argument('--fair-queues', type=int, default=16,
                   help='hashed round-robin buckets per class, for per-'
                        'connection fairness (0 = one FIFO per class; '
                        'default 16)')


def _fabric(a, log):
    from .emulator.fabric import Fabric
    policy = getattr(a, 'policy', None)
    params = _params(getattr(a, 'param', None))
    if policy:
        from . import policies
        policies.make(policy, params, where='--policy')
    return Fabric(topo.parse_spec(a.topology), link_mbps=a.link_mbps,
                  queues=a.queues, mtu=a.mtu, fair_queues=a.fair_queues,
                  log=log, policy=policy, policy_params=params,
                  class_map=getattr(a, 'class_map', None),
                  scheduler=_scheduler_knobs(a))


def cmd_selftest(a):
    """k=4 fat-tree: all-pairs reachability, cross-pod throughput."""
    from .emulator import measure
    log = _logger()
    g = topo.parse_spec(a.topology)
    hosts = topo.hosts(g)
    src, dst = hosts[0], hosts[-1]
    with _fabric(a, log) as fab:
        log('checking reachability of all %d host pairs'
            % (len(hosts) * (len(hosts) - 1)))
        failed = measure.reachability(fab)
        log('measuring TCP throughput %s -> %s for %d s'
            % (src, dst, a.seconds))
        f = measure.Flow(src, dst, 40001, 5201, a.seconds)
        measure.run_iperf(fab, [f])
        path = ' > '.join(routing.path(g, f.five_tuple(g)))
        up = dict(fab.timings)
    down = fab.timings['teardown_s']
    rate = f.mean_bps(skip_s=1)
    best = a.link_mbps * 1e6 * measure.goodput_efficiency(a.mtu)
    print('\nnetsched selftest: %s, %d hosts, %d switches, %.4g Mbit/s links, '
          'Q=%d, MTU %d' % (a.topology, len(hosts), len(topo.switches(g)),
                            a.link_mbps, a.queues, a.mtu))
    print('  start-up            %6.1f s' % up['startup_s'])
    print('  reachability        %d/%d pairs, %.0f%% loss'
          % (len(hosts) * (len(hosts) - 1) - len(failed),
             len(hosts) * (len(hosts) - 1),
             100.0 * len(failed) / max(1, len(hosts) * (len(hosts) - 1))))
    print('  cross-pod TCP       %6.2f Mbit/s (%.0f%% of the link rate, '
          '%.0f%% of the best TCP goodput)'
          % (rate / 1e6, 100 * rate / (a.link_mbps * 1e6), 100 * rate / best))
    print('  path                %s' % path)
    print('  teardown            %6.1f s' % down)
    return 0 if not failed and rate > 0 else 1


def cmd_up(a):
    """Bring a fabric up and keep it up until Ctrl-C or SIGTERM."""
    log = _logger()
    with _fabric(a, log) as fab:
        log('control socket: %s (policy %s, scale %g)'
            % (fab.socket_path, fab.policy or 'none', fab.scale))
        log('hosts: %s' % ', '.join('%s=%s' % (h, fab.ip(h))
                                   for h in topo.hosts(fab.g)[:8])
            + (' ...' if len(fab.g) > 8 else ''))
        if a.cli:
            from mininet.cli import CLI
            CLI(fab.net)
        else:
            log('up; Ctrl-C tears it down')
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                pass
    log('torn down in %.1f s' % fab.timings['teardown_s'])
    return 0


def cmd_controller(a):
    """Run netsched's Ryu app in the foreground (for plain Mininet), with
    a scheduling policy that agents register with."""
    from . import policies, qos
    from .control.channel import fabric_description
    from .emulator.controller import ryu_command, ryu_env
    g = topo.parse_spec(a.topology)
    qos.check_queues(a.queues)
    params = _params(a.param)
    if a.policy:
        policies.make(a.policy, params, where='--policy')
    if not a.scale > 0:
        raise NetschedError('--scale must be positive, got %r' % a.scale)
    sock = os.path.abspath(a.socket)
    os.makedirs(os.path.dirname(sock), exist_ok=True)
    desc = sock + '.fabric.json'
    with open(desc, 'w') as f:
        json.dump(fabric_description(
            g, a.queues, sock, policy=a.policy, policy_params=params,
            scale=a.scale, decision_log=a.decision_log and
            os.path.abspath(a.decision_log), class_map=a.class_map,
            scheduler=_scheduler_knobs(a)), f)
    os.execve(sys.executable, ryu_command(a.port, framework=a.framework),
              ryu_env(desc))


def _class_map_arg(p):
    from .policies.base import CLASS_MAPS, DEFAULT_CLASS_MAP
    p.add_argument('--class-map', choices=CLASS_MAPS,
                   default=DEFAULT_CLASS_MAP,
                   help="how the policy's ranks map onto the classes (the "
                   "experiment's class_map; default %(default)s)")
    # the experiment's scheduler block (measuring knobs), for a run that
    # attaches to this controller
    p.add_argument('--floor-release', action='store_true',
                   help="the experiment's scheduler.floor_release")
    p.add_argument('--hold-starved', action='store_true',
                   help="the experiment's scheduler.hold_starved")


def _scheduler_knobs(a):
    return {'floor_release': bool(getattr(a, 'floor_release', False)),
            'hold_starved': bool(getattr(a, 'hold_starved', False))}


def _params(pairs):
    """--param k=v (repeated) -> {k: v}, v a number where it is one."""
    out = {}
    for p in pairs or ():
        k, sep, v = p.partition('=')
        if not sep or not k:
            raise NetschedError('--param takes KEY=VALUE, got %r' % p)
        try:
            out[k] = int(v)
        except ValueError:
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
    return out


def cmd_status(a):
    """What a running controller has decided (read-only): the newest
    live run's, found from the run records, or the one at --socket."""
    from .control.channel import ControlClient
    sock, run_id, others = _status_target(a)
    with ControlClient(sock, 5.0).connect() as c:
        sw = c.request('status')
        d = c.request('decision')
    if a.json:
        json.dump({'run': run_id, 'socket': sock, 'switches': sw,
                   'decision': d}, sys.stdout, indent=1, sort_keys=True)
        print()
        return 0
    if run_id:
        print('run %s (%s)%s' % (run_id, sock, '; also live: %s (--run ID)'
                                 % ', '.join(others) if others else ''))
    print(status_text(sw, d))
    return 0


def _status_target(a):
    """(control socket, run id or None, other live runs' ids) for
    `status`: --socket as given; else the live run named by --run, or the
    newest live run with a controller (runstate.live_runs); else the
    socket of `netsched controller`, if one listens there."""
    from .emulator import runstate
    if a.socket:
        return a.socket, None, []
    where = runstate.RUNS_DIR
    try:
        recorded = runstate.recorded_runs()
        live = runstate.live_runs()
    except (OSError, ValueError) as e:
        raise NetschedError('cannot read the run records in %s: %s'
                            % (where, e)) from None
    live_ids = [st.run_id for st in live]
    with_ctl = [st for st in live if os.path.exists(st.socket)]
    if a.run:
        if a.run not in [st.run_id for st in recorded]:
            raise NetschedError('--run %s: no such run recorded in %s (%s)'
                                % (a.run, where, ', '.join(
                                    st.run_id for st in recorded) or 'none'))
        named = [st for st in with_ctl if st.run_id == a.run]
        if not named:
            raise NetschedError('run %s: %s' % (a.run, 'its controller is '
                                'not up' if a.run in live_ids else
                                'not live (its owner has exited)'))
        with_ctl = named + [st for st in with_ctl if st.run_id != a.run]
    if with_ctl:
        return (with_ctl[0].socket, with_ctl[0].run_id,
                [st.run_id for st in with_ctl[1:]])
    if os.path.exists(DEFAULT_SOCKET):     # `netsched controller`'s
        return DEFAULT_SOCKET, None, []
    dead = [st.run_id for st in recorded if st.run_id not in live_ids]
    seen = ['%s is live without a controller' % st.run_id for st in live] \
        + ['%s was left by a killed run' % r for r in dead[-3:]]  # latest
    raise NetschedError(
        'no live run with a controller in %s: %s%s; for a controller '
        'started by hand give --socket PATH' % (
            where, ', '.join(seen) or 'no run recorded',
            ' (`netsched clean` removes what killed runs left)'
            if dead else ''))


def status_text(sw, d):
    """The controller's state as a few printed lines."""
    lines = ['controller %s: %d/%d switches ready, policy %s'
             % ('up', sw['ready'], sw['switches'], d.get('policy') or 'none')]
    links = ['  link %-16s %8.3g Gbit/s  %3.0f%%'
             % (ln['link'], ln['bps'] / 1e9, 100 * ln['util'])
             for ln in d.get('links', ())]
    if not d.get('policy'):
        return '\n'.join(lines + links)
    lines.append('run %s: %d agents, %d decisions'
                 % (d['run'] or '-', len(d['hosts']), d['decisions']))
    for j, v in d['jobs'].items():
        lines.append('  job %-16s iteration %d' % (j, v['iter'] + 1))
    for c, v in sorted(d['coflows'].items()):
        lines.append('  coflow %-16s class %s  in flight %d  pending %d'
                     % (c, '-' if v['class'] is None else v['class'],
                        v['in_flight'], v['pending']))
    for c in d['connections']:
        m = c['match']
        rates = ', '.join('%s: %.3g Mbit/s' % (t, r * 8 / 1e6)
                          for t, r in sorted(c['rates_Bps'].items()))
        lines.append('  conn %s#%d %s:%d -> %s:%d  %s class %s%s'
                     % (c['host'], c['id'], m['ipv4_src'], m['tcp_src'],
                        m['ipv4_dst'], m['tcp_dst'], c['coflow'],
                        '-' if c['class'] is None else c['class'],
                        '  rates ' + rates if rates else ''))
    lines += links
    for dpid, rules in sorted(d['rules'].items()):
        lines.append('  switch %s: %d rules' % (dpid, len(rules)))
        for rule in rules:
            m = rule['match']
            lines.append('    %s:%d -> %s:%d  class %d  owner %d'
                         % (m['ipv4_src'], m['tcp_src'], m['ipv4_dst'],
                            m['tcp_dst'], rule['class'], rule['owner']))
    return '\n'.join(lines)


def _experiment(a):
    from .pipeline import experiment, overrides
    return experiment.load(a.experiment, backend=getattr(a, 'backend', None),
                           policy=getattr(a, 'policy', None),
                           trace=getattr(a, 'trace', None),
                           circuits=getattr(a, 'circuits', None),
                           seed=getattr(a, 'seed', None),
                           sets=overrides.single(getattr(a, 'set', None)))


def cmd_sweep(a):
    """The cross product of policies, seeds, --set values and backends."""
    from .pipeline import run
    from .pipeline import overrides, progress, sweep
    axes = []
    for text in a.set or ():
        path, values = overrides.parse(text)
        axes.append((overrides.key_name(path), values))
    seeds = sweep.parse_seeds(a.seeds)
    backends = ['sim', 'emu'] if a.backend == 'both' else [a.backend]
    if 'emu' in backends and not a.cluster and not a.dry_run:
        if os.geteuid() != 0:
            raise NetschedError('sweep --backend %s: the emulator needs root'
                                % a.backend)
        from .emulator import ovs
        ovs.require_running()           # not one failed run per arm
    if a.jobs is not None and a.jobs < 1:
        raise NetschedError('-j must be at least 1, got %d' % a.jobs)
    pols = [p for p in a.policies.split(',') if p]
    specs = sweep.plan(a.experiment, pols, seeds, axes, backends, a.trace)
    sweep.check_out(a.out, a.experiment)
    named = sweep.labels(pols)          # label=spec: display names
    baseline = sweep.baseline_of(named, a.baseline)
    if a.no_figures:
        specs = [dataclasses.replace(s, figures=False) for s in specs]
    if a.dry_run:
        print(sweep.dry_run(specs, a.out, a.force), end='')
        return 0
    if a.cluster:
        from .pipeline import cluster
        executor = cluster.ClusterExecutor(a.cluster)
    else:
        executor = sweep.LocalExecutor(a.jobs)
    definition = {'experiment': os.path.abspath(a.experiment),
                  'policies': [n for n, _ in named], 'seeds': seeds,
                  'labels': {n: sp for n, sp in named if n != sp},
                  'sets': [[k, [overrides.value_text(v) for v in vs]]
                           for k, vs in axes],
                  'backends': backends, 'baseline': baseline,
                  'trace': a.trace and os.path.abspath(a.trace),
                  'cluster': a.cluster, 'command': sys.argv,
                  'commit': run.commit()}
    # a closed terminal or a kill stops the sweep as Ctrl-C does: its
    # runs are in sessions of their own and would go on unwatched
    old = {sig: signal.signal(sig, _interrupt)
           for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        table = sweep.run_sweep(specs, a.out, definition, executor,
                                a.force, progress.SweepProgress())
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
        if not a.no_report and os.path.isfile(os.path.join(a.out,
                                                           'sweep.json')):
            from .pipeline import report
            print('report: %s' % report.write(a.out, baseline=baseline,
                                              figures=not a.no_figures))
        elif os.path.isfile(os.path.join(a.out, 'sweep.json')):
            from .pipeline import tables   # the report writes them too
            tables.write_sweep(a.out, baseline)
        if os.path.isdir(os.path.join(a.out, 'tables')):
            print('tables: %s, ratios.csv' % os.path.join(a.out, 'tables'))
    rows = [table.rows[s.key] for s in specs if s.key in table.rows]
    failed = [r for r in rows if r['status'] != 'ok']
    print('runs: %s (%d ok, %d failed)' % (
        os.path.join(a.out, 'runs.csv'), len(rows) - len(failed),
        len(failed)))
    return 1 if failed else 0


def cmd_reproduce(a):
    """Each seed policy against its paper's baselines (a study file)."""
    from .pipeline import progress, reproduce, sweep
    study = reproduce.load(a.study)
    backends = list(reproduce.BACKENDS) if a.backend == 'both' \
        else [a.backend]
    if 'emu' in backends:
        if os.geteuid() != 0:
            raise NetschedError('reproduce --backend %s: the emulator needs '
                                'root (--backend sim runs without)'
                                % a.backend)
        from .emulator import ovs
        ovs.require_running()           # not one failed run per arm
    if a.jobs is not None and a.jobs < 1:
        raise NetschedError('-j must be at least 1, got %d' % a.jobs)
    only = [x for x in (a.only or '').split(',') if x]
    seeds = sweep.parse_seeds(a.seeds) if a.seeds else None
    planned = reproduce.plan(study, backends, only, seeds)
    _check_study_out(a.out, [reproduce.folder(a.out, s, b)
                             for s, b, _ in planned])
    for s, b, _ in planned:
        sweep.check_out(reproduce.folder(a.out, s, b), s.experiment)
    print('reproduce: %d sweeps, %d runs into %s' % (
        len(planned), sum(len(x) for _, _, x in planned), a.out))
    old = {sig: signal.signal(sig, _interrupt)
           for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        out = reproduce.run(study, planned, a.out, a.jobs, a.force,
                            lambda label, metric: progress.SweepProgress(
                                label=label, metric=metric))
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
    with open(os.path.join(a.out, 'reproduction.md')) as f:
        sys.stdout.write(f.read())
    print('report: %s' % out)
    return 0


def _check_study_out(out, folders):
    """reproduce's --out: new, empty, or a study folder it resumes (its
    reproduce.json, or one of the planned sweeps' sweep.json, is there);
    not a folder that holds something else."""
    if not os.path.isdir(out) or not os.listdir(out):
        return
    own = [os.path.join(out, 'reproduce.json')] + [
        os.path.join(f, 'sweep.json') for f in folders]
    if not any(os.path.isfile(f) for f in own):
        raise NetschedError('--out %s: exists, is not empty and holds no '
                            'reproduction (no reproduce.json nor any of its '
                            'sweeps); choose another folder' % out)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def cmd_check(a):
    """Validate an experiment without running it (no root needed)."""
    from .pipeline import run
    from .workload import bounds
    exp = _experiment(a)
    # everything that can fail, before a word is printed; the size first,
    # so that a run too big to plan is not planned
    est, warnings = bounds.admit(exp, force=a.long)
    g, traced, plan = run.check(exp)
    if traced:
        from .workload import trace
        ports, cofs, racks = traced
    print('%s: ok' % a.experiment)
    print('  estimate: %s' % est.text())
    lim = bounds.limits(exp, est)
    print('  limits: %s; %s; %s' % (lim.time_text(), lim.events_text(),
                                   lim.log_text()))
    for w in warnings:
        print('  warning: %s' % w)
    for line in exp.knobs.environment_lines():
        print('  %s' % line)
    if exp.knobs.changed():
        print('  measuring knobs: %s' % ', '.join(exp.knobs.changed()))
    print('  backend %s, policy %s, seed %d, topology %s (%d hosts), '
          'links %.4g Gbit/s, scale %g (emulated links %.4g Mbit/s), '
          'queues %s' % (exp.backend, exp.policy, exp.seed, exp.topology,
                         len(topo.hosts(g)), exp.link_bps / 1e9, exp.scale,
                         exp.link_bps / exp.scale / 1e6,
                         'exact' if exp.queues is None else exp.queues))
    if exp.circuits is not None:
        planes, tors = topo.planes(g), topo.tors(g)
        up = sum(d['capacity_bps'] for m, d in g[tors[0]].items()
                 if g.nodes[m]['role'] == 'spine')
        print('  circuits: scheduler %s%s; %d ToRs, %d circuit(s) each of '
              '%.4g Gbit/s, packet uplinks %.4g Gbit/s per ToR, '
              'reconfiguration %g ms'
              % (exp.circuits[0], ' %s' % exp.circuits[1]
                 if exp.circuits[1] else '', len(tors), len(planes),
                 g[tors[0]][planes[0]]['capacity_bps'] / 1e9, up / 1e9,
                 g.graph['reconfig_s'] * 1e3))
    for f in exp.faults:
        print('  fault: %s %s down at %g s, %s' % (
            f.kind, f.target, f.at_s, 'back at %g s' % f.until_s
            if f.until_s is not None else 'for the rest of the run'))
    if exp.backend == 'emu':
        _resolution(exp, plan)
    if plan is not None:
        from . import policies
        pol = policies.make(exp.policy, exp.policy_params)
        for w in pol.warnings([{'id': j, 'pattern': jp.pattern,
                                'group': jp.group,
                                'iterations': jp.iterations}
                               for j, jp in plan.jobs.items()]):
            print('  warning: %s' % w)
        for jid, jp in plan.jobs.items():
            print('  job %-12s %-9s %-4s %d workers%s, %d iterations, '
                  'arrives %.2f s, %.1f MB gradients, %.1f MB per iteration'
                  % (jid, jp.model, jp.pattern, len(jp.workers),
                     ' + %d PS' % len(jp.servers) if jp.servers else '',
                     jp.iterations, jp.arrival_s, jp.gradient_bytes / 2 ** 20,
                     jp.bytes_per_iteration / 2 ** 20))
        for st in plan.stages:
            print('  stage %s: %d configurations, %d go on'
                  % (st.id, len(st.jobs), len(st.survivors)))
        print('  %d tasks, %d connections' % (len(plan.tasks),
                                               len(plan.conns)))
    if exp.trace:
        net = [trace.network_flows(c, racks, exp.big_switch)[2]
               for c in cofs]
        print('  trace %s: %d ports, %d coflows, %d flows'
              % (exp.trace.path, ports, len(cofs),
                 sum(len(c.mappers) * len(c.reducers) for c in cofs)))
        print('  racks %s on %d hosts: %d flows cross the network, %.1f MB '
              '(%.2f MB emulated); arrivals %.3g..%.3g s'
              % (exp.trace.racks, len(topo.hosts(g)),
                 sum(len(x) for x in net), sum(x.sum() for x in net) / 2**20,
                 sum(x.sum() for x in net) / exp.scale / 2**20,
                 cofs[0].arrival_s, cofs[-1].arrival_s))
    return 0




def _longest_path(exp, plan):
    """Links on the longest path any of the plan's connections takes (its
    ECMP path, from the same path table both backends use)."""
    from . import fluid
    net = fluid.Network(exp.graph())
    pids = {net.path_id(c.src, c.dst, c.sport, c.dport) for c in plan.conns}
    table = net.table()
    return max(int((table[p] >= 0).sum()) for p in pids) if pids else 0


def _resolution(exp, plan):
    """What the emulator resolves: one packet's time on an emulated link;
    a warning where most transfers are a few packets (each busy hop of
    their path adds a packet time the fluid model does not have) and
    where the policy decides on less data than TCP's initial window
    carries."""
    from . import policies
    from .pipeline.experiment import INITIAL_WINDOW
    link = exp.link_bps / exp.scale
    pkt_s = exp.mtu * 8 / link
    print('  emulated packet time %.2f ms (MTU %d at %.4g Mbit/s)'
          % (pkt_s * 1e3, exp.mtu, link / 1e6))
    sends = sorted(t.bytes / exp.scale for t in plan.tasks
                   if t.kind == 'send') if plan is not None else []
    if sends:
        median = sends[len(sends) // 2] / exp.mtu          # packets
        hops = _longest_path(exp, plan)
        if hops - 1 > median:
            print('  warning: median transfer %.1f emulated packets: busy '
                  'hops may add %.0f ms per transfer that the fluid model '
                  'lacks (docs/emulation.md)'
                  % (median, (hops - 1) * pkt_s * 1e3))
    windows, _, raised = exp.threshold_floor
    if raised:
        print('  %s: %s raised from %.3g to %.3g MB, %g initial windows at '
              'scale %g (threshold_floor_windows)'
              % (exp.policy, raised[0], raised[1], raised[2], windows,
                 exp.scale))
    finest = policies.make(exp.policy, exp.policy_params).finest_bytes()
    if finest is not None and finest / exp.scale < INITIAL_WINDOW * exp.mtu:
        print('  warning: %s decides on %.0f emulated bytes, less than '
              'TCP\'s initial window: the emulator cannot follow it '
              '(docs/fidelity.md)' % (exp.policy, finest / exp.scale))


def cmd_demo(a):
    """The default job: experiments/demo.yaml (what `make demo` runs)."""
    from . import ROOT
    a.experiment = os.path.join(ROOT, 'experiments', 'demo.yaml')
    a.trace = None
    return cmd_run(a)


def cmd_run(a):
    """Run an experiment on the chosen backend and report."""
    from .pipeline import run
    from .workload import bounds
    exp = _experiment(a)
    out = a.out or run.default_out(exp)
    run.check_out(out, getattr(a, 'force', False), own='run')
    exp, warnings = bounds.bounded(exp, force=getattr(a, 'long', False),
                                   out_dir=out)
    log = _logger()
    for w in warnings:
        log('warning: %s' % w)
    out, summary = run.execute(exp, out, say=log,
                               attach=getattr(a, 'attach', None),
                               command=getattr(a, 'command_line', None),
                               figures=not getattr(a, 'no_figures', False))
    print()
    print(run.table(summary))
    print('results: %s' % out)
    for p in summary['plots']:
        print('plot: %s' % p)
    print('report: %s' % summary['report'])
    return 0


def cmd_compare(a):
    """Per-job and per-coflow differences between two runs' results."""
    from .pipeline import metrics, run
    # --out as a run's: checked before anything is read or printed, and
    # never a run's (or a sweep's) folder, whose report.html it would
    # replace
    run.check_out(a.out, a.force, own='compare')
    for path in (a.a, a.b):
        _compare_input(path)
    sa, sb = metrics.load_summary(a.a), metrics.load_summary(a.b)
    rows = metrics.compare(sa, sb)
    print('A: %s (%s)   B: %s (%s)' % (a.a, _run_label(sa), a.b,
                                       _run_label(sb)))
    # a run that did not finish: its figures are shown, flagged partial
    partial = {side: metrics.incomplete_text(s, '') for side, s in
               (('A', sa), ('B', sb)) if metrics.incomplete_text(s)}
    for side, text in partial.items():
        print('INCOMPLETE %s: %s' % (side, text))
    flag = '  [partial: %s incomplete]' % ' and '.join(partial) \
        if partial else ''
    # the same scheduling on another backend is measured against A (its
    # error); two schedulers are merely different
    word = 'error' if all(sa.get(k) == sb.get(k) for k in (
        'policy', 'policy_params', 'circuit_scheduler')) else 'difference'
    if a.all:
        gone = {side: 'unfinished' if side in partial else '-'
                for side in 'AB'}
        for kind, key, x, y, err in rows:
            print('  %-16s %-20s %12s %12s %8s' % (
                kind, key, gone['A'] if x is None else '%.4f' % x,
                gone['B'] if y is None else '%.4f' % y,
                '-' if err is None else '%+.1f%%' % (100 * err)))
    for kind, st in metrics.error_stats(rows).items():
        if st['n']:
            print('%-16s n=%-5d mean |%s| %5.1f%%  max |%s| %5.1f%%  '
                  'mean %s %+5.1f%%%s' % (
                      kind, st['n'], word, 100 * st['mean_abs'], word,
                      100 * st['max_abs'], word, 100 * st['mean'],
                      '  (%d only in one run)' % st['missing']
                      if st['missing'] else '') + flag)
    if partial:
        print('INCOMPLETE: these %ss compare %s partial figures: only the '
              'jobs and coflows that finished in both runs, not two '
              'finished runs' % (word, ' and '.join(
                  '%s\'s' % x for x in partial)))
    if a.out:
        from .pipeline import report
        report.write_compare(a.out, a.a, a.b, sa, sb, rows)
        print('report: %s' % report.write(a.out))
    return 0


def _compare_input(path):
    """compare reads two run folders: a sweep (or another results folder)
    given instead is told what compares it, not "summary.json: No such
    file"."""
    from .pipeline import paths
    k = paths.folder_kind(path) if os.path.isdir(path) else None
    if k in (None, 'run'):
        return
    if k in ('sweep', 'reproduce'):
        runs = sorted(d for d in os.listdir(path) if os.path.isfile(
            os.path.join(path, d, 'summary.json')))
        pair = ' '.join(os.path.join(path, d) for d in (
            runs[:2] if len(runs) > 1 else ('RUN_A', 'RUN_B')))
        raise NetschedError(
            'compare %s: a %s folder; compare takes two run folders. Its '
            'policies against each other, paired by seed with 95%% '
            'intervals: netsched report %s (report.html, ratios.csv); two '
            'of its runs: netsched compare %s' % (
                path, 'sweep' if k == 'sweep' else 'reproduction', path,
                pair))
    raise NetschedError('compare %s: a %s folder, not a run; its '
                        'report.html holds its comparison (netsched report '
                        '%s), and compare takes two run folders'
                        % (path, k, path))


def _run_label(summary):
    """A run's backend, policy and, on a hybrid fabric, circuit
    scheduler, for compare's header."""
    circ = summary.get('circuit_scheduler')
    return '%s, %s%s' % (summary.get('backend'), summary.get('policy'),
                         ', circuits %s' % circ if circ else '')


def cmd_report(a):
    """report.html for a run, sweep, crosscheck or compare folder."""
    from .pipeline import report
    notes = []          # runs that did not finish, said before the path
    path = report.write(a.folder, baseline=a.baseline, fmt=a.format,
                        notes=notes, style=a.style)
    for line in notes:
        print(line)
    print('report: %s' % path)
    return 0


def cmd_export(a):
    """A run's timeline as a Perfetto (Chrome trace-event) JSON file."""
    from .pipeline import export
    print('trace: %s' % export.write(a.run, a.format, a.out))
    return 0


def cmd_crosscheck(a):
    """Two or three backends, several policies: same ranking? how far
    apart?"""
    from .pipeline import crosscheck, run
    backends = crosscheck.parse_backends(a.backends)
    pols = [p for p in a.policies.split(',') if p]
    crosscheck.check_args(pols, a.metric, a.tie)
    run.check_out(a.out, a.force)
    out = a.out or os.path.join('results', '%s-crosscheck-%s' % (
        os.path.splitext(os.path.basename(a.experiment))[0],
        time.strftime('%Y%m%d-%H%M%S')))

    def ready():
        """Once the experiment has loaded for every run, before the
        first: what the chosen backends need (the emulator: root and a
        running Open vSwitch; ns-3: its package)."""
        if 'emu' in backends:
            if os.geteuid() != 0:
                raise NetschedError('crosscheck --backends %s: the emulator '
                                    'needs root (--backends sim,ns3 runs '
                                    'without)' % ','.join(backends))
            from .emulator import ovs
            ovs.require_running()
        if 'ns3' in backends:
            from .ns3 import loader
            if not loader.available():
                raise NetschedError('crosscheck --backends %s: %s' % (
                    ','.join(backends), loader.INSTALL_HINT))
    report = crosscheck.crosscheck(a.experiment, pols, out, a.metric, a.tie,
                                   say=_logger(),
                                   sim_packets=a.sim_packets, trace=a.trace,
                                   backends=backends, ready=ready)
    print()
    print(crosscheck.table(report))
    print('results: %s' % out)
    from .pipeline import report as page
    print('report: %s' % page.write(out))
    return 0 if report['agree'] else 1


def cmd_clean(a):
    from .emulator import runstate
    n = runstate.clean()
    print('cleaned %d run(s)' % n)
    return 0


def cmd_topo(a):
    g = topo.parse_spec(a.spec)
    if a.json:
        json.dump(topo.to_dict(g), sys.stdout, indent=1, sort_keys=True)
        print()
        return 0
    roles = {}
    for _, d in g.nodes(data=True):
        roles[d['role']] = roles.get(d['role'], 0) + 1
    print('%s: %d nodes, %d links; %s' % (
        a.spec, g.number_of_nodes(), g.number_of_edges(),
        ', '.join('%d %s' % (n, r) for r, n in sorted(roles.items()))))
    return 0


def cmd_policies(a):
    """Every policy and circuit scheduler a name reaches (built-in or an
    installed package's entry point): parameters, what it is, and how
    each backend carries it out."""
    import textwrap
    from . import circuits, policies
    out = {}
    for key, reg in (('policies', policies.registry),
                     ('circuits', circuits.registry)):
        out[key] = [dict(reg.describe(x), origin=origin)
                    if not isinstance(x, NetschedError) else
                    {'name': name, 'origin': origin, 'error': str(x)}
                    for name, origin, x in reg.catalogue()]
    if a.json:
        json.dump(out, sys.stdout, indent=1, sort_keys=True)
        print()
        return 0
    for key, title in (('policies', 'Policies (--policy NAME or '
                        'package.module:ClassName; entry points: group '
                        'netsched.policies)'),
                       ('circuits', 'Circuit schedulers (--circuits, '
                        "hybrid fabrics; entry points: group "
                        'netsched.circuits)')):
        print(title)
        for d in out[key]:
            print('\n  %s  [%s]' % (d['name'], d['origin']))
            if 'error' in d:
                print('    error: %s' % d['error'])
                continue
            print(textwrap.fill(d['description'] or '(no description)', 79,
                                initial_indent='    ',
                                subsequent_indent='    '))
            print('    parameters: %s' % (', '.join(
                '%s=%s' % kv for kv in d['params'].items()) or 'none'))
            for b, label in (('sim', 'simulator'), ('emu', 'emulator')):
                for note in d['backends'][b]:
                    print(textwrap.fill(note, 79, initial_indent='    %-11s'
                                        % (label + ':'),
                                        subsequent_indent=' ' * 15))
        print()
    return 0


def _logger():
    t0 = time.monotonic()

    def log(msg):
        print('[%6.1fs] %s' % (time.monotonic() - t0, msg), flush=True)
    return log


TRACE_HELP = ("the coflow trace file, in place of the experiment's "
              "trace.path (default: that name, looked for beside the "
              "experiment, in $NETSCHED_TRACE, then in data/; "
              "experiments/README.md, \"Traces\")")


def _experiment_and_policies(p, default, labels=False):
    p.add_argument('experiment', help='experiment YAML file')
    p.add_argument('--policies', default=default,
                   help='comma-separated, each NAME or NAME:key=value:...%s '
                   '(default %%(default)s)' % (
                       ', or LABEL=that, shown as LABEL (base=fair,mine='
                       'aalo:first_mb=40)' if labels else ''))


def build_parser():
    ap = argparse.ArgumentParser(
        prog='netsched', description='Network flow and coflow scheduling '
        'emulator for distributed deep-learning clusters.')
    ap.add_argument('--version', action='version', version=__version__)
    sub = ap.add_subparsers(dest='command', required=True)
    p = sub.add_parser('demo', help='the default job: run experiments/'
                       'demo.yaml (three DL jobs on an emulated k=4 '
                       'fat-tree) and report')
    p.add_argument('--backend', choices=('emu', 'sim', 'ns3'),
                   help="override the file's backend")
    p.add_argument('--policy', help="override the file's policy")
    p.add_argument('--out', help='output directory (new or empty)')
    p.add_argument('--force', action='store_true',
                   help='write into a --out folder that is not empty')
    p.set_defaults(fn=cmd_demo)
    p = sub.add_parser('selftest', help='fabric check: bring up a fabric, '
                       'check reachability, measure throughput, tear down')
    _fabric_args(p)
    p.add_argument('--seconds', type=int, default=5)
    p.set_defaults(fn=cmd_selftest)
    p = sub.add_parser('up', help='bring a fabric up until Ctrl-C')
    _fabric_args(p)
    p.add_argument('--cli', action='store_true', help='open the Mininet CLI')
    p.add_argument('--policy', help='scheduling policy the controller runs '
                   '(agents started by hand register with it; see `netsched'
                   ' run --attach`)')
    p.add_argument('--param', action='append', metavar='KEY=VALUE',
                   help='a policy parameter (repeatable)')
    _class_map_arg(p)
    p.set_defaults(fn=cmd_up)
    p = sub.add_parser('controller', help="run netsched's Ryu controller in "
                       'the foreground (for `mn --custom topologies/...`)')
    p.add_argument('--topology', default='fattree,4')
    p.add_argument('--queues', type=int, default=8)
    p.add_argument('--port', type=int, default=6653)
    p.add_argument('--socket', default=DEFAULT_SOCKET)
    p.add_argument('--policy', help='scheduling policy that agents '
                   'register with (default: none, routes only)')
    p.add_argument('--param', action='append', metavar='KEY=VALUE',
                   help="a policy parameter (repeatable)")
    p.add_argument('--scale', type=float, default=1.0,
                   help='data-center bit/s per emulated bit/s (the '
                        "experiment's scale; default 1)")
    p.add_argument('--decision-log', help='append decisions here (JSON '
                   'lines)')
    _class_map_arg(p)
    p.add_argument('--framework', choices=('ryu', 'os-ken'), default='ryu',
                   help='the SDN framework the app runs under (default '
                   '%(default)s, as ryu-manager; os-ken is its maintained '
                   'fork)')
    p.set_defaults(fn=cmd_controller)
    p = sub.add_parser('status', help="the running controller's decision: "
                       'classes and rates per job, coflow and connection,'
                       ' rules per switch (read-only)')
    p.add_argument('--socket', help='a controller\'s control socket '
                   '(default: the newest live run\'s, from the run records '
                   'in $NETSCHED_RUNS_DIR or /run/netsched/runs)')
    p.add_argument('--run', metavar='RUN_ID', help='this live run\'s')
    p.add_argument('--json', action='store_true')
    p.set_defaults(fn=cmd_status)
    for name, fn, hlp in (
            ('run', cmd_run, 'run an experiment file'),
            ('check', cmd_check, 'validate an experiment file (no root)')):
        p = sub.add_parser(name, help=hlp)
        p.add_argument('experiment', help='experiment YAML file')
        p.add_argument('--backend', choices=('emu', 'sim', 'ns3'),
                       help="override the file's backend")
        p.add_argument('--policy', help="override the file's policy: NAME "
                       "or NAME:key=value:... (e.g. geryon:classes=1)")
        p.add_argument('--trace', help=TRACE_HELP)
        p.add_argument('--circuits', help="a hybrid fabric's circuit "
                       "scheduler, overriding the file's: NAME or "
                       "NAME:key=value:... (e.g. matching:period_s=0.1)")
        p.add_argument('--seed', type=int, help="override the file's seed")
        p.add_argument('--set', action='append', metavar='KEY=VALUE',
                       help='set any experiment key by its dotted path '
                       '(link_gbps=40, jobs.0.workers=8, policy_params.'
                       'classes=2; repeatable)')
        p.add_argument('--long', action='store_true',
                       help='accept an ns-3 run estimated at over an hour '
                       'of wall time')
        if name == 'run':
            p.add_argument('--out', help='output directory, new or empty '
                           '(default results/<name>-<backend>-<policy>-'
                           '<time>)')
            p.add_argument('--force', action='store_true',
                           help='write into a --out folder that is not '
                           'empty (its files of the same names are '
                           'replaced)')
            p.add_argument('--no-figures', action='store_true',
                           help='write report.html without its figures '
                           '(no drawing: faster)')
            p.add_argument('--attach', metavar='CONTROLLER_SOCKET',
                           help='run on a fabric that is already up (plain '
                           'Mininet with `netsched controller`, or `netsched'
                           ' up`) with agents started by hand: prints the '
                           'command for each host and waits for them')
        p.set_defaults(fn=fn)
    p = sub.add_parser('compare', help="compare two runs' results "
                       '(e.g. the emulator against the simulator)')
    p.add_argument('a', help='results directory (reference)')
    p.add_argument('b', help='results directory')
    p.add_argument('--all', action='store_true', help='print every row')
    p.add_argument('--out', help='also write a compare folder here '
                   '(compare.json and report.html): new or empty, or with '
                   '--force a compare folder')
    p.add_argument('--force', action='store_true',
                   help='write into a --out folder that is not empty (never'
                   ' one that holds a run, a sweep or a crosscheck)')
    p.set_defaults(fn=cmd_compare)
    p = sub.add_parser('crosscheck', help='run an experiment under several '
                       'policies on two or three backends and compare the '
                       'rankings (exit status 1 if two disagree)')
    _experiment_and_policies(p, 'fair,sebf')
    p.add_argument('--backends', default='sim,emu',
                   help='two or three of sim, ns3, emu, comma-separated; '
                   'every pair is compared (default %(default)s)')
    p.add_argument('--metric', default='avg_cct_s',
                   help='summary total to rank by, lower is better: %s '
                        '(default %%(default)s)' % ', '.join(TOTALS))
    p.add_argument('--tie', type=float, default=0.05,
                   help='relative difference below which two policies tie '
                        '(default %(default)s)')
    p.add_argument('--sim-packets', choices=('none', 'dc', 'emulated'),
                   help="the simulator's packets (default: the file's "
                   "sim_packets, else none): 'emulated' adds the emulated "
                   "packets' store-and-forward time on busy hops")
    p.add_argument('--trace', help=TRACE_HELP)
    p.add_argument('--out', help='output directory, new or empty (default '
                   'results/<experiment>-crosscheck-<time>)')
    p.add_argument('--force', action='store_true',
                   help='write into a --out folder that is not empty')
    p.set_defaults(fn=cmd_crosscheck)
    p = sub.add_parser(
        'sweep', help='run an experiment over policies x seeds x --set '
        'values x backends; runs.csv and report.html in --out',
        description='Run the cross product; each run is an ordinary run '
        'folder under --out. Interrupted or re-run, it skips the runs '
        'already done.')
    _experiment_and_policies(p, 'fair', labels=True)
    p.add_argument('--seeds', default='1', help='N, N-M or a list of them '
                   '(default %(default)s)')
    p.add_argument('--set', action='append', metavar='KEY=V1,V2,...',
                   help='an axis: an experiment key by its dotted path and '
                   'its values (repeatable; the cross product runs)')
    p.add_argument('--backend', choices=('sim', 'emu', 'both'),
                   default='sim', help='(default %(default)s)')
    p.add_argument('-j', '--jobs', type=int, help='simulations at once '
                   '(default: the cores); emulations run one at a time')
    p.add_argument('--cluster', metavar='tcp://HOST:PORT',
                   help='run on a Dask distributed cluster instead')
    p.add_argument('--trace', help=TRACE_HELP)
    p.add_argument('--baseline', help="the policy the report's ratios are "
                   'against (default: fair if swept, else the first)')
    p.add_argument('--force', action='store_true',
                   help='re-run the runs already done')
    p.add_argument('--no-report', action='store_true',
                   help='do not write report.html at the end')
    p.add_argument('--no-figures', action='store_true',
                   help="the runs' and the sweep's reports without figures "
                   '(tables only; no drawing)')
    p.add_argument('--dry-run', action='store_true',
                   help='check every run and print each with its folder; '
                   'run nothing, write nothing')
    p.add_argument('--out', required=True, help='the sweep folder: new, '
                   'empty, or a sweep of the same experiment (resumed)')
    p.set_defaults(fn=cmd_sweep)
    p = sub.add_parser(
        'reproduce', help="each seed policy against its paper's baselines: "
        'the reproduction table and report',
        description='Runs a study file: per policy, a sweep of its '
        "experiment over its paper's baselines, seeds and one axis, on "
        'each backend; writes reproduction.md/.csv and report.html in '
        '--out. Resumes where it stopped.')
    p.add_argument('study', help='the study file')
    p.add_argument('--backend', choices=('sim', 'emu', 'both'),
                   default='sim', help='(default %(default)s); the '
                   "emulator runs the study's reduced seeds and axis")
    p.add_argument('--only', metavar='ID,...', help='these studies only')
    p.add_argument('--seeds', help="override the study's seeds (N, N-M or "
                   'a list)')
    p.add_argument('-j', '--jobs', type=int, help='simulations at once '
                   '(default: the cores)')
    p.add_argument('--force', action='store_true',
                   help='re-run the runs already done')
    p.add_argument('--out', required=True, help='the study folder: new, '
                   'empty, or a study folder (resumed)')
    p.set_defaults(fn=cmd_reproduce)
    p = sub.add_parser(
        'report', help='write report.html for a run, sweep, crosscheck or '
        'compare folder', description='A self-contained HTML page (figures '
        'inline, nothing fetched).')
    p.add_argument('folder', help='a run, sweep, crosscheck or compare '
                   'folder')
    p.add_argument('--baseline', help="a sweep's ratios are against this "
                   "policy (default: the sweep's --baseline)")
    p.add_argument('--format', choices=('png', 'svg', 'pdf'),
                   help='also write each figure to FOLDER/figures/ in this '
                   'format')
    p.add_argument('--style', choices=('default', 'paper'),
                   help="paper: figures a paper's column wide (3.3 in), in "
                   'serif fonts that embed in PDF')
    p.set_defaults(fn=cmd_report)
    p = sub.add_parser(
        'policies', help='list every policy and circuit scheduler: '
        'parameters, what it does, how each backend enforces it',
        description='Built-ins and those installed packages add (entry '
        'point groups netsched.policies and netsched.circuits). A policy '
        'outside the package can also be named by module path, --policy '
        'package.module:ClassName[:key=value...] (docs/writing-a-policy.md)'
        '.', epilog='Example: netsched policies --json > policies.json; '
        'then, with a policy of your own in mypolicies/srcf.py: netsched '
        'run experiments/demo.yaml --backend sim --policy '
        'mypolicies.srcf:SmallestRemaining:starve_s=2')
    p.add_argument('--json', action='store_true', help='one JSON object: '
                   '{"policies": [...], "circuits": [...]}')
    p.set_defaults(fn=cmd_policies)
    p = sub.add_parser('export', help="a run's timeline for "
                       'ui.perfetto.dev: hosts, jobs, links, decisions')
    p.add_argument('run', help='a run folder')
    p.add_argument('--format', choices=('perfetto', 'chakra'),
                   default='perfetto')
    p.add_argument('--out', help='the file (default RUN/trace.perfetto.json)')
    p.set_defaults(fn=cmd_export)
    p = sub.add_parser('clean', help='remove what killed runs left behind '
                       '(by recorded names and pids)')
    p.set_defaults(fn=cmd_clean)
    p = sub.add_parser('topo', help='describe a topology')
    p.add_argument('spec')
    p.add_argument('--json', action='store_true')
    p.set_defaults(fn=cmd_topo)
    _examples(sub)
    return ap


# `netsched COMMAND --help` ends with these (commands that bring their own
# epilog keep it)
EXAMPLES = {
    'demo': ['netsched demo --backend sim --out results/demo'],
    'selftest': ['sudo netsched selftest --topology fattree,4 --seconds 5'],
    'up': ['sudo netsched up --topology leafspine,2,2,2 --policy sebf',
           'netsched status            # from another terminal'],
    'controller': ['netsched controller --topology dumbbell,2 --policy sebf '
                   '--scale 500',
                   'sudo mn --custom topologies/dumbbell.py --topo dumbbell,2 '
                   '--switch ovs,datapath=user,protocols=OpenFlow13 '
                   '--controller remote,ip=127.0.0.1,port=6653'],
    'status': ['netsched status                     # the newest live run',
               'netsched status --run RUN_ID --json'],
    'run': ['netsched run experiments/demo.yaml --backend sim '
            '--policy sebf --out results/demo-sebf',
            'netsched run experiments/fb-trace.yaml --trace '
            'data/FB2010-1Hr-150-0.txt'],
    'check': ['netsched check experiments/demo.yaml',
              'netsched check experiments/fb-trace.yaml --set '
              'trace.limit=50'],
    'compare': ['netsched compare results/demo-emu results/demo-sim '
                '--out results/demo-compare'],
    'crosscheck': ['netsched crosscheck experiments/crosscheck.yaml '
                   '--policies fair,sebf --out results/crosscheck',
                   'netsched crosscheck experiments/crosscheck.yaml '
                   '--backends sim,ns3 --policies fair,sebf'],
    'sweep': ['netsched sweep experiments/demo.yaml --backend sim '
              '--policies fair,fifo,sebf --seeds 1-5 --set link_gbps=10,40 '
              '--out results/demo-sweep'],
    'reproduce': ['netsched reproduce experiments/reproduce/study.yaml '
                  '--backend sim --only geryon --out results/reproduce'],
    'report': ['netsched report results/demo-sweep --baseline fifo '
               '--format pdf'],
    'clean': ['sudo netsched clean'],
    'export': ['netsched export results/demo --format perfetto  '
               '# then open trace.perfetto.json at ui.perfetto.dev'],
    'topo': ['netsched topo fattree,8', 'netsched topo hybrid,4,1 --json'],
}


def _examples(sub):
    """Each command's --help ends with its examples, as written (the
    description wrapped here, since the raw formatter keeps lines)."""
    import shutil
    import textwrap
    width = min(79, shutil.get_terminal_size().columns - 2)
    for name, p in sub.choices.items():
        if p.epilog or name not in EXAMPLES:
            continue
        p.formatter_class = argparse.RawDescriptionHelpFormatter
        if p.description:
            p.description = textwrap.fill(p.description, width)
        p.epilog = 'example%s:\n%s' % (
            's' if len(EXAMPLES[name]) > 1 else '',
            '\n'.join('  ' + x for x in EXAMPLES[name]))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    a = build_parser().parse_args(argv)
    a.command_line = ['netsched'] + argv         # what run.json records
    try:
        return a.fn(a) or 0
    except NetschedError as e:
        print('netsched: error: %s' % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print('netsched: interrupted; torn down', file=sys.stderr)
        return 130
    except BrokenPipeError:
        if not _stdout_closed():
            raise                 # a socket's, say: not to be hidden
        # the reader left (`| head`): stop quietly, as Unix tools do on
        # SIGPIPE; stdout goes to /dev/null so that the interpreter's
        # last flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE


def _stdout_closed():
    """Whether stdout is a pipe whose reader has gone (poll says POLLERR
    on such a pipe's writing end)."""
    import select
    try:
        p = select.poll()
        p.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & select.POLLERR for _, ev in p.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


if __name__ == '__main__':
    sys.exit(main())
