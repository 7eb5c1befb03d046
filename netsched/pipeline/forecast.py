"""What an emulated run's packets will cost it, known before it runs.

The emulator scales every rate down by ``scale`` and keeps the MTU, so
an emulated packet takes ``scale`` times longer against the run's
transfers than a packet at data-center rates does. Where a coflow moves
in dependent steps over several hops (a ring's steps across a
fat-tree's five switches) and a policy gives it a class of its own,
every step waits for its last packet at every hop: time the fluid model
does not have and a data-center network (ns-3 at the real rates) barely
has. That is the emulated network's answer, not the datapath falling
behind, so no lag measured during the run shows it.

The emulated hosts add a cost of their own that does not scale either:
an agent starts a send a fraction of a millisecond after what it waited
for arrived, and a chain of small dependent transfers (a parameter
server's, a ring's steps) adds it up.

A third does not scale either: TCP finds a connection's share from
the ACKs of its first windows. At scale s a connection carries s times
fewer packets than the one it stands for, and one whose whole stream
fits in TCP's first rounds of slow start is in the network before any
congestion signal comes back: the senders of an incast put everything
into their uplinks at once, and the queues, not the senders, share the
links. The fluid model's max-min shares, and the same streams at the
real rates (thousands of packets each), assume congestion control found
its share; ``short_streams`` counts the bytes it cannot have.

The simulator measures the first two before the run: the same
experiment on the same graph and policy, once fluid and once as
emulated, with the emulator's packets (``sim_packets: emulated``, MTU x
scale serialised on every busy hop) and each send starting a uniform
draw in [0, ``START_MS``] after its connection takes it. How far the second parts
from the first, per job and per coflow, is the part of the emulator's
error that its packets and its hosts make; pipeline.verdict names it
(docs/fidelity.md, "The verdict").
"""
import dataclasses

from . import metrics, verdict
from .experiment import INITIAL_WINDOW

MODELS = ('none', 'emulated')
# a stream of at most this many rounds of slow start from the initial
# window (10 + 20 + 40 packets) has left before the third round's ACKs,
# the first that could slow it, come back
SHORT_ROUNDS = 3
# the agents start a send 0.25-0.9 ms (median) after what it waited for
# arrived (docs/emulation.md): a uniform draw up to 1 ms
START_MS = 1.0


def packets(exp, meta):
    """The forecast for emulated run ``exp``: ``jobs`` and ``coflows``
    (mean |relative error| of the simulator with the emulator's packets
    and send starts against its fluid model; None where the run has
    none), the emulated ``packet_ms`` on the slowest link, the ``mtu``,
    ``scale`` and ``start_ms``.
    ``floor_share``: the fluid run's lowest class crowded
    (verdict.floor_share). ``meta``: the summary's meta of a run of
    ``exp`` (pipeline.run.meta).
    The two simulations run in folders removed after."""
    from ..sim import runner as sim_runner
    summaries, runs = {}, {}
    for model in MODELS:
        late = START_MS if model == 'emulated' else 0.0
        knobs = dataclasses.replace(exp.knobs, send_jitter_ms=late,
                                    send_jitter_seed=exp.seed)
        with sim_runner.scratch(dataclasses.replace(
                exp, backend='sim', sim_packets=model, model='maxmin',
                knobs=knobs), 'forecast') as log:
            runs[model] = metrics.from_log(log)
        summaries[model] = metrics.summarize(runs[model],
                                             dict(meta, backend='sim'))
    st = metrics.error_stats(metrics.compare(summaries['none'],
                                             summaries['emulated']))
    slowest = min(c for _, _, c in
                  exp.graph().edges(data='capacity_bps'))
    return {'jobs': st.get('job jct_s', {}).get('mean_abs'),
            'coflows': st.get('coflow cct_s', {}).get('mean_abs'),
            'packet_ms': round(exp.mtu * 8.0 * exp.scale / slowest * 1e3, 4),
            'mtu': exp.mtu, 'scale': exp.scale, 'start_ms': START_MS,
            # the fluid model's lowest class crowded, as the emulator's
            # is set against it (verdict.floor_share)
            'floor_share': verdict.floor_share(
                runs['none']['coflows'], runs['none']['class_changes'],
                verdict.floor_class(meta.get('queues'))),
            **short_streams(exp)}


def short_streams(exp, plan=None):
    """The bytes of emulated run ``exp`` (its ``plan``, built if not
    given) that travel on connections whose whole stream is at most
    ``short_packets`` emulated packets (``SHORT_ROUNDS`` rounds of slow
    start from the hosts' initial window): ``{'short_share': fraction of
    the bytes sent (None without any), 'short_packets': n}``."""
    from ..workload import taskgraph
    plan = plan or taskgraph.build(exp)
    window = exp.knobs.initcwnd or INITIAL_WINDOW
    most = window * (2 ** SHORT_ROUNDS - 1)
    stream = {}
    for t in plan.tasks:
        if t.kind == 'send':
            stream[t.conn] = stream.get(t.conn, 0.0) + t.bytes
    total = sum(stream.values())
    # the emulator sends bytes / scale, in segments of MTU less the IP
    # and TCP headers with timestamps
    seg = (exp.mtu - 52) * exp.scale
    short = sum(b for b in stream.values() if b / seg <= most)
    return {'short_share': round(short / total, 4) if total else None,
            'short_packets': most}


def line(fc):
    """The forecast in one console line."""
    def pct(x):
        return '-' if x is None else '%.1f%%' % (100 * x)
    short = ''
    if fc.get('short_share'):
        short = '; %s of the bytes on connections of at most %d packets' % (
            pct(fc['short_share']), fc['short_packets'])
    return ('fidelity forecast: at scale %g a %d-byte packet takes %.2f ms '
            'on the slowest emulated link; with packets that coarse and '
            'sends starting up to %g ms late, as the agents start them, the '
            'simulator parts from its fluid model by %s per job, %s per '
            'coflow%s' % (fc['scale'], fc['mtu'], fc['packet_ms'],
                          fc.get('start_ms', 0), pct(fc['jobs']),
                          pct(fc['coflows']), short))
