"""The fabric's commands: bring one up (selftest, up), run the
controller for plain Mininet, read a running controller's state, and
clean up after killed runs."""
import json
import os
import sys
import time

from .. import routing
from .. import topology as topo
from ..control.channel import DEFAULT_SOCKET
from ..errors import NetschedError
from . import common


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
    from ..control.spec import ControllerSpec
    from ..emulator.fabric import Fabric
    policy = getattr(a, 'policy', None)
    params = _params(getattr(a, 'param', None))
    if policy:
        from .. import policies
        policies.make(policy, params, where='--policy')
    spec = ControllerSpec.for_link(
        topo.parse_spec(a.topology), a.link_mbps, queues=a.queues,
        policy=policy, policy_params=params,
        class_map=getattr(a, 'class_map', None),
        scheduler=_scheduler_knobs(a))
    return Fabric(spec, mtu=a.mtu, fair_queues=a.fair_queues, log=log)


def selftest_args(p):
    _fabric_args(p)
    p.add_argument('--seconds', type=int, default=5)


def cmd_selftest(a):
    """k=4 fat-tree: all-pairs reachability, cross-pod throughput."""
    from ..emulator import measure
    log = common.logger()
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


def up_args(p):
    _fabric_args(p)
    p.add_argument('--cli', action='store_true', help='open the Mininet CLI')
    p.add_argument('--policy', help='scheduling policy the controller runs '
                   '(agents started by hand register with it; see `netsched'
                   ' run --attach`)')
    p.add_argument('--param', action='append', metavar='KEY=VALUE',
                   help='a policy parameter (repeatable)')
    _class_map_arg(p)


def cmd_up(a):
    """Bring a fabric up and keep it up until Ctrl-C or SIGTERM."""
    log = common.logger()
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


def controller_args(p):
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


def cmd_controller(a):
    """Run netsched's Ryu app in the foreground (for plain Mininet), with
    a scheduling policy that agents register with."""
    from .. import policies, qos
    from ..control.spec import ControllerSpec
    from ..emulator.controller import ryu_command, ryu_env
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
        f.write(ControllerSpec(
            g, a.queues, a.scale, a.policy, params, class_map=a.class_map,
            scheduler=_scheduler_knobs(a), socket=sock,
            decision_log=a.decision_log and
            os.path.abspath(a.decision_log)).to_json())
    os.execve(sys.executable, ryu_command(a.port, framework=a.framework),
              ryu_env(desc))


def _class_map_arg(p):
    from ..policies.base import CLASS_MAPS, DEFAULT_CLASS_MAP
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


def status_args(p):
    p.add_argument('--socket', help='a controller\'s control socket '
                   '(default: the newest live run\'s, from the run records '
                   'in $NETSCHED_RUNS_DIR or /run/netsched/runs)')
    p.add_argument('--run', metavar='RUN_ID', help='this live run\'s')
    p.add_argument('--json', action='store_true')


def cmd_status(a):
    """What a running controller has decided (read-only): the newest
    live run's, found from the run records, or the one at --socket."""
    from ..control.channel import ControlClient
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
    from ..emulator import runstate
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


def cmd_clean(a):
    from ..emulator import runstate
    n = runstate.clean()
    print('cleaned %d run(s)' % n)
    return 0
