"""The seed policies of issue 11 on the real emulator, each with its
experiment in experiments/ by `netsched crosscheck` against its
baselines: both backends rank the policy and its baselines the same way,
and the emulator shows the policy's effect in what the hosts observed
(iteration times, tensor arrival, the event log's stage order)."""
import pytest

from netsched import events
from netsched import topology as topo
from netsched.emulator import ovs

from .helpers import check, summary


def front_latency(tmp_path, pol, job):
    """Median latency (ready to received) on the emulator of one job's
    front-layer sends (first quarter of its model's bytes).

    The median, not the mean: TensorExpress's per-send classes reorder a
    connection's packets between queues (557-700 TCP retransmissions and
    6-9 retransmission timeouts per run, measured), and the few
    front-layer sends that wait out a timeout (0.7-0.9 s) carry the
    mean. ResNet-50's mean front latency under TensorExpress ranged
    0.047-0.275 s over seven runs (two of them above 0.8 x fair's
    0.149 s, on the code before and after issue 12 alike), its median
    0.029-0.051 s against fair's 0.137-0.142 s."""
    evs = events.read(str(tmp_path / ('emu-%s' % pol) / 'events.jsonl'))
    lat = sorted(e['t'] - e['ready'] for e in evs if e['ev'] == 'flow'
                 and e.get('urgency') is not None and e['urgency'] < 0.25
                 and e['coflow'].startswith(job + '/'))
    assert lat, (pol, job)
    n = len(lat)
    return (lat[(n - 1) // 2] + lat[n // 2]) / 2


def test_jpas_speeds_the_new_job_and_slows_the_old(tmp_path):
    rep, why = check('jpas', ['jpas', 'fair', 'fifo'], 'avg_jct_s',
                     tmp_path)
    # the newest job (steepest on its loss curve) ranks first, the
    # oldest last: on the emulator their iterations move accordingly
    jp, fair = (summary(tmp_path, 'emu', p)['jobs'] for p in ('jpas',
                                                               'fair'))
    it = lambda s, j: s[j]['iteration_time_s']['mean']   # noqa: E731
    assert it(jp, 'new') < 0.8 * it(fair, 'new'), why
    assert it(jp, 'old') > it(fair, 'old'), why
    assert rep['totals']['emu']['jpas'] < rep['totals']['emu']['fair']


# ranked by iteration time: by front-layer latency the emulator cannot
# tell TensorExpress from p3 (its per-send floor: p3's front layers take
# 0.055 s emulated against 0.024 s simulated; docs/benchmarks.md, "Seed policies")
@pytest.mark.parametrize('name, pols, metric', [
    ('geryon', ['geryon', 'geryon:classes=1', 'fair'], 'avg_iteration_s'),
    ('tensorexpress', ['tensorexpress', 'p3', 'fair'], 'avg_iteration_s')])
def test_front_layers_arrive_earlier_than_under_fair_sharing(
        tmp_path, name, pols, metric):
    # Geryon's iterations against fair sharing's depend on the machine:
    # its starved lower classes drop at the bottleneck and wait out TCP
    # timeouts. Where OVS forwards 700 Mbit/s (docs/testing.md) a CI run
    # measured 646 retransmissions and 37 timeouts (7.05 s of recovery)
    # under Geryon, none under fair sharing, and 1.19 s per iteration
    # against fair's 1.12 s (simulator 0.84 s and 1.10 s); its front
    # layers still came 18x and 2.7x sooner (docs/reproduction.md).
    # TensorExpress' starved classes time out the same way with no drop
    # (6-9 RTOs in each of 7 runs here, old code and new): usually 0.6-1.3 s
    # of recovery, once in CI 3.3 s of backoff that took ResNet-50 to
    # 10.1 s an iteration and put fair sharing ahead
    unstable = {(name, 'fair')}
    rep, why = check(name, pols, metric, tmp_path, unstable)
    # both PS jobs contend for the bottleneck; each one's front layers
    # (what its next forward pass needs first) arrive sooner
    for job in ('vgg', 'r50'):
        mine = front_latency(tmp_path, name, job)
        fair = front_latency(tmp_path, 'fair', job)
        assert mine < 0.8 * fair, (job, mine, fair, why)
    # the switches queued the tagged sends: every decided class reached
    # the hosts, and some were not class 0
    evs = events.read(str(tmp_path / ('emu-%s' % name) / 'events.jsonl'))
    tags = [k for e in evs if e['ev'] == 'send_classes'
            for k in e['classes'].values()]
    assert tags and max(tags) > 0


def test_beamer_stage_order_in_the_event_log_is_the_decided_one(tmp_path):
    rep, why = check('beamer', ['beamer', 'sincronia', 'fifo', 'fair'],
                     'avg_sct_s', tmp_path)
    evs = sorted(events.read(str(tmp_path / 'emu-beamer' / 'events.jsonl')),
                 key=lambda e: e['t'])
    end = {e['stage']: e['t'] for e in evs if e['ev'] == 'stage_end'}
    # Beamer puts BERT's small first stage ahead of ResNet-50's: every
    # class it decided while both ran says so ...
    cls, seen, ended = {}, 0, set()
    for e in evs:
        if e['ev'] == 'classes':
            # a coflow that ended may still be classed after its end is
            # logged (the controller hears of it from a later report):
            # that class is stale, not an order among running coflows
            cls.update({c: k for c, k in e['classes'].items()
                        if c not in ended})
            b = [k for c, k in cls.items() if c.startswith('bert')]
            r = [k for c, k in cls.items() if c.startswith('r50')]
            if b and r and e['t'] < end['bert/s0']:
                seen += 1
                assert max(b) < min(r), (e, cls)
        elif e['ev'] == 'coflow_end':
            cls.pop(e['coflow'], None)
            ended.add(e['coflow'])
    assert seen
    # ... and the stages ended in that order
    assert end['bert/s0'] < end['r50/s0'], end
    g = topo.parse_spec('dumbbell,8')
    assert not set(topo.switches(g)) & set(ovs.bridges())
