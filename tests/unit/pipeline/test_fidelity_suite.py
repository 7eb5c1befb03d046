"""The fidelity suite loads on both backends under every baseline, and
the fidelity analysis (netsched.pipeline.fidelity: errors, targets,
ranking agreement) from hand-made records and summaries."""
import glob
import json
import os
import subprocess
import sys

import pytest

from netsched.errors import ConfigError
from netsched.pipeline import experiment, fidelity, metrics

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
SUITE = sorted(glob.glob(os.path.join(ROOT, 'experiments', 'fidelity',
                                      '*.yaml')))


def test_the_suite_has_at_least_six_experiments():
    assert len(SUITE) >= 6
    names = [os.path.basename(p) for p in SUITE]
    assert 'trace-slice.yaml' in names


@pytest.mark.parametrize('path', SUITE, ids=os.path.basename)
def test_every_suite_experiment_loads_on_both_backends(path):
    for backend in ('sim', 'emu'):
        for p in fidelity.POLICIES:
            exp = experiment.load(path, backend=backend, policy=p)
            assert exp.policy == p and exp.backend == backend


def test_matrix_marks_targets_and_counts_agreeing_reps():
    sims = {'x': {'fair': {'avg_cct_s': 1.0}, 'sebf': {'avg_cct_s': 0.5}}}

    def rec(p, rep, total, jobs, cof):
        return {'experiment': 'x', 'policy': p, 'rep': rep, 'total': total,
                'errors': {'job jct_s': jobs, 'coflow cct_s': cof},
                'diag': {'retransmits': 4, 'timeouts': 0}}
    records = [rec('fair', 0, 1.02, 0.01, 0.02),
               rec('sebf', 0, 0.55, 0.05, 0.10),
               rec('fair', 1, 1.01, 0.02, 0.03),
               # rep 1: SEBF after fair beyond the tie: a disagreement
               rec('sebf', 1, 1.20, 0.12, 0.30)]
    m = fidelity.matrix(records, sims, ['fair', 'sebf'])['x']
    assert m['reps'] == 2 and m['ranking_agrees'] == 1
    fair, sebf = m['policies']['fair'], m['policies']['sebf']
    assert fair['meets'] == {'job jct_s': True, 'coflow cct_s': True}
    assert sebf['meets'] == {'job jct_s': False, 'coflow cct_s': False}
    assert sebf['coflows'] == {'mean': pytest.approx(0.2), 'min': 0.10,
                               'max': 0.30, 'n': 2}
    text = fidelity.table(fidelity.matrix(records, sims, ['fair', 'sebf']),
                          ['fair', 'sebf'])
    assert 'agree in 1 of 2 reps' in text and '!' in text


def test_a_trace_experiment_has_no_job_errors():
    """A coflow trace has no jobs: its job error is None, which the
    progress lines show as '-' and the matrix as '-?' (no target)."""
    sims = {'t': {'fair': {'avg_cct_s': 1.0}, 'sebf': {'avg_cct_s': 0.5}}}
    records = [{'experiment': 't', 'policy': p, 'rep': 0, 'total': v,
                'errors': {'job jct_s': None, 'coflow cct_s': 0.1},
                'diag': {}} for p, v in (('fair', 1.0), ('sebf', 0.5))]
    m = fidelity.matrix(records, sims, ['fair', 'sebf'])['t']
    assert m['policies']['fair']['jobs'] is None
    assert m['policies']['fair']['meets']['job jct_s'] is None
    rec = dict(records[0], errors_by_model={'none': records[0]['errors']},
               missing_by_model={'none': {}})
    assert 'jobs -, coflows 10.0%' in fidelity.progress(1, 2, rec,
                                                        {'none': 1.0})
    assert '-?' in fidelity.table(
        fidelity.matrix(records, sims, ['fair', 'sebf']), ['fair', 'sebf'])


def test_simulator_ranking_groups_ties_and_counts_pairs_apart():
    sims = {'fair': {'avg_cct_s': 1.0}, 'fifo': {'avg_cct_s': 0.98},
            'sebf': {'avg_cct_s': 0.5}}
    r = fidelity.sim_ranking(sims, ['fair', 'fifo', 'sebf'])
    assert r['order'] == 'sebf < fifo = fair'
    assert (r['pairs_apart'], r['pairs']) == (2, 3)
    # a policy the simulator has no figure for ranks last, apart from none
    r = fidelity.sim_ranking({'fair': {'avg_cct_s': 1.0}}, ['fair', 'sebf'])
    assert r['order'] == 'fair = sebf' and r['pairs_apart'] == 0


def test_a_failed_run_is_counted_and_its_rep_left_out_of_the_ranking():
    sims = {'x': {'fair': {'avg_cct_s': 1.0}, 'sebf': {'avg_cct_s': 0.5}}}
    ok = {'errors': {'job jct_s': 0.02, 'coflow cct_s': 0.05},
          'diag': {'retransmits': 3, 'timeouts': 1, 'paused_s': 0.25}}
    records = [dict(ok, experiment='x', policy='fair', rep=0, total=1.0),
               dict(ok, experiment='x', policy='sebf', rep=0, total=0.5),
               dict(ok, experiment='x', policy='fair', rep=1, total=1.0),
               {'experiment': 'x', 'policy': 'sebf', 'rep': 1,
                'total': None, 'error': 'RunError: agent hr0 died',
                'diag': {}}]
    m = fidelity.matrix(records, sims, ['fair', 'sebf'])['x']
    assert m['reps'] == 1 and m['ranking_agrees'] == 1
    sebf = m['policies']['sebf']
    assert sebf['failed'] == 1 and sebf['emu']['n'] == 1
    assert sebf['paused_s']['mean'] == 0.25
    assert sebf['meets'] == {'job jct_s': True, 'coflow cct_s': True}
    text = fidelity.table(fidelity.matrix(records, sims, ['fair', 'sebf']),
                          ['fair', 'sebf'])
    assert '1 failed' in text and '3/1' in text and '0.25' in text
    line = fidelity.progress(4, 4, records[3], {'none': 0.5})
    assert 'FAILED' in line and 'agent hr0 died' in line


def test_simulator_only_matrix_has_no_emulator_figures():
    sims = {'x': {'fair': {'avg_cct_s': 1.0}, 'sebf': {'avg_cct_s': 0.5}}}
    m = fidelity.matrix([], sims, ['fair', 'sebf'])['x']
    assert m['reps'] == 0 and m['policies']['fair']['emu'] is None
    assert m['policies']['fair']['meets'] == {'job jct_s': None,
                                              'coflow cct_s': None}
    text = fidelity.table(fidelity.matrix([], sims, ['fair', 'sebf']),
                          ['fair', 'sebf'])
    assert 'simulator: sebf < fair (1 of 1 pairs apart' in text
    assert 'agree in' not in text


def test_spread_ignores_missing_values():
    assert fidelity.spread([]) is None and fidelity.spread([None]) is None
    assert fidelity.spread([0.1, None, 0.3]) == {
        'mean': pytest.approx(0.2), 'min': 0.1, 'max': 0.3, 'n': 2}


def test_progress_line_of_an_unfinished_run():
    """A run that finished no coflow has no total: '-', not a crash."""
    rec = {'experiment': 'x', 'policy': 'fair', 'rep': 0, 'total': None,
           'errors_by_model': {'none': {'job jct_s': None,
                                        'coflow cct_s': None}},
           'missing_by_model': {'none': {'job jct_s': 2,
                                         'coflow cct_s': 5}}, 'diag': {}}
    line = fidelity.progress(1, 6, rec, {'none': None})
    assert 'emu -; sim[none] -' in line and '7 unfinished' in line


def _summary(jobs, coflows):
    return {'jobs': {j: {'jct_s': v, 'iteration_time_s': {'mean': v}}
                     for j, v in jobs.items()},
            'coflows': {c: {'cct_s': v} for c, v in coflows.items()},
            'totals': {'avg_cct_s': None}}


def test_emulator_record_errors_and_unfinished_items(tmp_path):
    sim = _summary({'a': 1.0, 'b': 2.0}, {'a/0': 0.5, 'b/0': 1.0})
    emu = _summary({'a': 1.1, 'b': None}, {'a/0': 0.4, 'b/0': None})
    slow = _summary({'a': 1.1, 'b': 2.2}, {'a/0': 0.4, 'b/0': 1.1})
    rec = fidelity.emu_record('x', 'fair', 0,
                              {'none': sim, 'emulated': slow}, emu,
                              str(tmp_path))
    e = rec['errors_by_model']
    assert e['none']['job jct_s'] == pytest.approx(0.1)
    assert e['none']['coflow cct_s'] == pytest.approx(0.2)
    assert e['emulated']['job jct_s'] == pytest.approx(0.0)
    assert e['emulated']['coflow cct_s'] == pytest.approx(0.0)
    assert rec['missing_by_model']['none'] == {'job jct_s': 1,
                                               'coflow cct_s': 1}
    assert rec['diag'] == {}                     # no run.json
    line = fidelity.progress(1, 1, rec, {'none': 1.0, 'emulated': 1.1})
    assert 'sim[none] 1.000: jobs 10.0%, coflows 20.0%' in line
    assert 'sim[emulated] 1.100: jobs 0.0%, coflows 0.0%' in line


def test_matrix_reads_the_errors_against_the_model_asked_for():
    """Records carry errors per simulator packet model; each matrix is
    one model's."""
    sims = {'x': {'fair': {'avg_cct_s': 1.0}, 'sebf': {'avg_cct_s': 0.5}}}

    def rec(p, total, fluid, packets):
        return {'experiment': 'x', 'policy': p, 'rep': 0, 'total': total,
                'errors_by_model': {
                    'none': {'job jct_s': fluid, 'coflow cct_s': fluid},
                    'emulated': {'job jct_s': packets,
                                 'coflow cct_s': packets}},
                'missing_by_model': {'none': {}, 'emulated': {}},
                'diag': {}}
    records = [rec('fair', 1.0, 0.02, 0.01), rec('sebf', 0.55, 0.4, 0.05)]
    fluid = fidelity.matrix(records, sims, ['fair', 'sebf'], 'none')['x']
    packets = fidelity.matrix(records, sims, ['fair', 'sebf'],
                              'emulated')['x']
    assert fluid['policies']['sebf']['jobs']['mean'] == 0.4
    assert fluid['policies']['sebf']['meets']['job jct_s'] is False
    assert packets['policies']['sebf']['jobs']['mean'] == 0.05
    assert packets['policies']['sebf']['meets']['job jct_s'] is True


def test_diagnostics_read_run_json_and_tolerate_absent_fields(tmp_path):
    with open(tmp_path / 'run.json', 'w') as f:
        json.dump({'backend_info': {
            'tcp_retransmits_by_connection': {'hl0#1': 4, 'hl1#2': 9},
            'tcp_timeouts_by_host': {'hl0': 1, 'hl1': None, 'hr0': 2},
            'tcp_rto_recovery_s_by_connection': {'hl0#1': 0.25,
                                                 'hr0#3': 0.5},
            'queue_drops_by_interface': {'s1-eth1': 2, 's1-eth2': 0},
            'ovs_drops_by_port': {'s1-eth1': 0},
            'socket_drops_by_port': {'s1-eth2': 3}}}, f)
    d = metrics.diagnostics(str(tmp_path))
    assert d == {'retransmits': 13, 'worst_connection': ['hl1#2', 9],
                 'timeouts': 3, 'rto_s': 0.75, 'paused_s': None,
                 'drops': 5, 'drops_at': {'queue': 2, 'socket': 3}}
    with open(tmp_path / 'run.json', 'w') as f:
        json.dump({'backend_info': {'tcp_retransmits': 5,
                                    'paused_s': 0.4}}, f)
    d = metrics.diagnostics(str(tmp_path))
    assert d == {'retransmits': 5, 'worst_connection': None,
                 'timeouts': None, 'rto_s': None, 'paused_s': 0.4,
                 'drops': None, 'drops_at': {}}


def test_jitter_delays_each_job_within_the_bound_and_repeats_by_seed():
    d = {'jobs': [{'id': 'a'}, {'id': 'b', 'arrival_s': 0.3}]}
    one = fidelity.jittered(d, 0.001, 0)
    assert d == {'jobs': [{'id': 'a'}, {'id': 'b', 'arrival_s': 0.3}]}
    delays = [one['jobs'][0]['arrival_s'],
              one['jobs'][1]['arrival_s'] - 0.3]
    assert all(0 <= x <= 0.001 for x in delays) and delays[0] != delays[1]
    assert fidelity.jittered(d, 0.001, 0) == one
    assert fidelity.jittered(d, 0.001, 1) != one


def test_sensitivity_bench_measures_the_simulator_against_itself(tmp_path):
    """On d2-ring, fair sharing moves little under 1 ms of arrival and
    1 ms of send jitter, against the file and between reps; every
    figure is there, one line per rep in runs.jsonl."""
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, 'benchmarks',
                                      'sensitivity_bench.py'),
         '--reps', '2', '--only', 'd2-ring', '--policies', 'fair,sebf',
         '--out', str(tmp_path)], capture_output=True, text=True,
        timeout=600)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / 'table.json') as f:
        got = json.load(f)
    assert got['send_jitter_ms'] == 1.0 and got['jitter_ms'] == 1.0
    for table in (got['table'], got['between_reps']):
        for p in ('fair', 'sebf'):
            for kind in ('job jct_s', 'coflow cct_s'):
                c = table['d2-ring'][p][kind]
                assert c['n'] == 2 and 0 < c['min'] <= c['max'], (p, kind)
    assert got['table']['d2-ring']['fair']['coflow cct_s']['max'] < 0.08
    assert got['between_reps']['d2-ring']['fair']['coflow cct_s']['max'] \
        < 0.03
    with open(tmp_path / 'runs.jsonl') as f:
        assert len(f.read().splitlines()) == 4


def summary(jobs, coflows):
    return {'jobs': {j: {'jct_s': v} for j, v in jobs.items()},
            'coflows': {c: {'cct_s': v} for c, v in coflows.items()}}


def test_self_errors_compare_every_ordered_pair_of_reps():
    runs = {('x', 'fair'): {0: summary({'a': 1.0}, {'c': 0.5}),
                            1: summary({'a': 2.0}, {'c': 0.5})},
            ('x', 'sebf'): {0: summary({'a': 1.0}, {'c': 1.0})}}
    got = fidelity.self_errors(runs)
    # rep 1 against rep 0: +100%; rep 0 against rep 1: -50%
    fair = got['x']['fair']
    assert fair['job jct_s'] == {'mean': 0.75, 'min': 0.5, 'max': 1.0,
                                 'n': 2}
    assert fair['coflow cct_s']['max'] == 0.0
    # one rep: no pair, no figure
    assert got['x']['sebf'] == {'job jct_s': None, 'coflow cct_s': None}
    text = fidelity.self_table(got, ['fair', 'sebf'])
    assert 'x            75 / 0' in text and '-' in text.splitlines()[1]


def _run(jobs, coflows):
    """A summary with its average CCT as total (what METRIC ranks by)."""
    s = summary(jobs, coflows)
    s['totals'] = {'avg_cct_s': sum(coflows.values()) / len(coflows)}
    return s


def test_a_tiny_matrix_worked_by_hand(tmp_path):
    """Two policies, two reps, from summaries to the matrix; every value
    is a binary fraction, so the errors are exact. The simulator:
    fair jobs a 2, b 4, coflows 1, 2 (total 1.5); sebf jobs 1, 4,
    coflows 0.5, 2 (total 1.25): sebf first, 0.25 apart > 5% tie."""
    sim = {'fair': _run({'a': 2.0, 'b': 4.0}, {'a/0': 1.0, 'b/0': 2.0}),
           'sebf': _run({'a': 1.0, 'b': 4.0}, {'a/0': 0.5, 'b/0': 2.0})}
    emu = {
        # fair rep 0: jobs |+0.5/2|, 0 -> 0.125; coflows 0, |0.25/2|
        # -> 0.0625; total (1 + 2.25) / 2 = 1.625
        ('fair', 0): _run({'a': 2.5, 'b': 4.0}, {'a/0': 1.0, 'b/0': 2.25}),
        # sebf rep 0: jobs 0, |0.5/4| -> 0.0625; coflows 0; total 1.25:
        # sebf first on both backends: the rep agrees
        ('sebf', 0): _run({'a': 1.0, 'b': 4.5}, {'a/0': 0.5, 'b/0': 2.0}),
        # fair rep 1: jobs |-0.5/2|, 0 -> 0.125; coflows |-0.25/1|, 0
        # -> 0.125; total (0.75 + 2) / 2 = 1.375
        ('fair', 1): _run({'a': 1.5, 'b': 4.0}, {'a/0': 0.75, 'b/0': 2.0}),
        # sebf rep 1: jobs 0, |0.25/4| -> 0.03125; coflows 0, |1/2|
        # -> 0.25; total (0.5 + 3) / 2 = 1.75 > 1.375 beyond the tie:
        # fair first, the simulator's opposite: the rep disagrees
        ('sebf', 1): _run({'a': 1.0, 'b': 4.25}, {'a/0': 0.5, 'b/0': 3.0})}
    records = [fidelity.emu_record('x', p, rep, {'none': sim[p]}, s,
                                   str(tmp_path))
               for (p, rep), s in sorted(emu.items())]
    assert records[0]['errors_by_model']['none'] == {
        'job jct_s': 0.125, 'coflow cct_s': 0.0625}
    sims = {'x': {p: s['totals'] for p, s in sim.items()}}
    m = fidelity.matrix(records, sims, ['fair', 'sebf'])['x']
    assert (m['reps'], m['ranking_agrees']) == (2, 1)
    fair, sebf = m['policies']['fair'], m['policies']['sebf']
    assert (fair['sim'], sebf['sim']) == (1.5, 1.25)
    assert fair['emu'] == {'mean': 1.5, 'min': 1.375, 'max': 1.625, 'n': 2}
    assert fair['jobs'] == {'mean': 0.125, 'min': 0.125, 'max': 0.125,
                            'n': 2}
    # (0.0625 + 0.125) / 2
    assert fair['coflows'] == {'mean': 0.09375, 'min': 0.0625,
                               'max': 0.125, 'n': 2}
    # (0.0625 + 0.03125) / 2; (0 + 0.25) / 2
    assert sebf['jobs'] == {'mean': 0.046875, 'min': 0.03125,
                            'max': 0.0625, 'n': 2}
    assert sebf['coflows'] == {'mean': 0.125, 'min': 0.0, 'max': 0.25,
                               'n': 2}
    # targets: jobs 10% (fair's 12.5% misses), coflows 15% (sebf's 25%
    # in rep 1 misses)
    assert fair['meets'] == {'job jct_s': False, 'coflow cct_s': True}
    assert sebf['meets'] == {'job jct_s': True, 'coflow cct_s': False}
    assert m['sim_ranking'] == {'order': 'sebf < fair', 'pairs_apart': 1,
                                'pairs': 1}
    text = fidelity.table({'x': m}, ['fair', 'sebf'])
    assert 'agree in 1 of 2 reps' in text
    assert '12.5% (12.5-12.5)!' in text and '25.0' in text


def test_the_targets_head_the_table_and_an_unknown_experiment_is_named():
    head = fidelity.table({}, []).splitlines()[0]
    assert 'jobs |err| <=%d%%' % round(100 * fidelity.TARGET['job jct_s']) \
        in head
    assert 'coflows |err| <=%d%%' % round(
        100 * fidelity.TARGET['coflow cct_s']) in head
    assert list(fidelity.suite(['d3-ring', 'd2-ring'])) == ['d3-ring',
                                                           'd2-ring']
    assert set(fidelity.suite()) == {os.path.basename(p)[:-5]
                                     for p in SUITE}
    with pytest.raises(ConfigError, match="'nope'.*d2-ring"):
        fidelity.suite(['d2-ring', 'nope'])
