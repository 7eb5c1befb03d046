"""The fidelity suite loads on both backends under every baseline, and
the fidelity benchmark's matrix (errors, targets, ranking agreement) from
hand-made records."""
import glob
import importlib.util
import os

import pytest

from netsched.pipeline import experiment

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SUITE = sorted(glob.glob(os.path.join(ROOT, 'experiments', 'fidelity',
                                      '*.yaml')))


def load_bench(name):
    """benchmarks/<name>.py as a module."""
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(ROOT, 'benchmarks', name + '.py'))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def bench():
    return load_bench('fidelity_bench')


def test_the_suite_has_at_least_six_experiments():
    assert len(SUITE) >= 6
    names = [os.path.basename(p) for p in SUITE]
    assert 'trace-slice.yaml' in names


@pytest.mark.parametrize('path', SUITE, ids=os.path.basename)
def test_every_suite_experiment_loads_on_both_backends(path):
    for backend in ('sim', 'emu'):
        for p in bench().POLICIES:
            exp = experiment.load(path, backend=backend, policy=p)
            assert exp.policy == p and exp.backend == backend


def test_matrix_marks_targets_and_counts_agreeing_reps():
    b = bench()
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
    m = b.matrix(records, sims, ['fair', 'sebf'])['x']
    assert m['reps'] == 2 and m['ranking_agrees'] == 1
    fair, sebf = m['policies']['fair'], m['policies']['sebf']
    assert fair['meets'] == {'job jct_s': True, 'coflow cct_s': True}
    assert sebf['meets'] == {'job jct_s': False, 'coflow cct_s': False}
    assert sebf['coflows'] == {'mean': pytest.approx(0.2), 'min': 0.10,
                               'max': 0.30, 'n': 2}
    text = b.table(b.matrix(records, sims, ['fair', 'sebf']),
                   ['fair', 'sebf'])
    assert 'agree in 1 of 2 reps' in text and '!' in text


def test_a_trace_experiment_has_no_job_errors():
    """A coflow trace has no jobs: its job error is None, which the
    progress lines show as '-' and the matrix as '-?' (no target)."""
    b = bench()
    sims = {'t': {'fair': {'avg_cct_s': 1.0}, 'sebf': {'avg_cct_s': 0.5}}}
    records = [{'experiment': 't', 'policy': p, 'rep': 0, 'total': v,
                'errors': {'job jct_s': None, 'coflow cct_s': 0.1},
                'diag': {}} for p, v in (('fair', 1.0), ('sebf', 0.5))]
    m = b.matrix(records, sims, ['fair', 'sebf'])['t']
    assert m['policies']['fair']['jobs'] is None
    assert m['policies']['fair']['meets']['job jct_s'] is None
    assert b._pct(None) == '-'
    assert '-?' in b.table(b.matrix(records, sims, ['fair', 'sebf']),
                           ['fair', 'sebf'])


def test_simulator_ranking_groups_ties_and_counts_pairs_apart():
    b = bench()
    sims = {'fair': {'avg_cct_s': 1.0}, 'fifo': {'avg_cct_s': 0.98},
            'sebf': {'avg_cct_s': 0.5}}
    r = b.sim_ranking(sims, ['fair', 'fifo', 'sebf'])
    assert r['order'] == 'sebf < fifo = fair'
    assert (r['pairs_apart'], r['pairs']) == (2, 3)
    # a policy the simulator has no figure for ranks last, apart from none
    r = b.sim_ranking({'fair': {'avg_cct_s': 1.0}}, ['fair', 'sebf'])
    assert r['order'] == 'fair = sebf' and r['pairs_apart'] == 0


def test_a_failed_run_is_counted_and_its_rep_left_out_of_the_ranking():
    b = bench()
    sims = {'x': {'fair': {'avg_cct_s': 1.0}, 'sebf': {'avg_cct_s': 0.5}}}
    ok = {'errors': {'job jct_s': 0.02, 'coflow cct_s': 0.05},
          'diag': {'retransmits': 3, 'timeouts': 1, 'paused_s': 0.25}}
    records = [dict(ok, experiment='x', policy='fair', rep=0, total=1.0),
               dict(ok, experiment='x', policy='sebf', rep=0, total=0.5),
               dict(ok, experiment='x', policy='fair', rep=1, total=1.0),
               {'experiment': 'x', 'policy': 'sebf', 'rep': 1,
                'total': None, 'error': 'RunError: agent hr0 died',
                'diag': {}}]
    m = b.matrix(records, sims, ['fair', 'sebf'])['x']
    assert m['reps'] == 1 and m['ranking_agrees'] == 1
    sebf = m['policies']['sebf']
    assert sebf['failed'] == 1 and sebf['emu']['n'] == 1
    assert sebf['paused_s']['mean'] == 0.25
    assert sebf['meets'] == {'job jct_s': True, 'coflow cct_s': True}
    text = b.table(b.matrix(records, sims, ['fair', 'sebf']),
                   ['fair', 'sebf'])
    assert '1 failed' in text and '3/1' in text and '0.25' in text
    line = b.progress(4, 4, records[3], {'none': 0.5})
    assert 'FAILED' in line and 'agent hr0 died' in line


def test_simulator_only_matrix_has_no_emulator_figures():
    b = bench()
    sims = {'x': {'fair': {'avg_cct_s': 1.0}, 'sebf': {'avg_cct_s': 0.5}}}
    m = b.matrix([], sims, ['fair', 'sebf'])['x']
    assert m['reps'] == 0 and m['policies']['fair']['emu'] is None
    assert m['policies']['fair']['meets'] == {'job jct_s': None,
                                              'coflow cct_s': None}
    text = b.table(b.matrix([], sims, ['fair', 'sebf']), ['fair', 'sebf'])
    assert 'simulator: sebf < fair (1 of 1 pairs apart' in text
    assert 'agree in' not in text


def test_spread_ignores_missing_values():
    b = bench()
    assert b.spread([]) is None and b.spread([None]) is None
    assert b.spread([0.1, None, 0.3]) == {
        'mean': pytest.approx(0.2), 'min': 0.1, 'max': 0.3, 'n': 2}


def test_progress_line_of_an_unfinished_run():
    """A run that finished no coflow has no total: '-', not a crash."""
    b = bench()
    rec = {'experiment': 'x', 'policy': 'fair', 'rep': 0, 'total': None,
           'errors_by_model': {'none': {'job jct_s': None,
                                        'coflow cct_s': None}},
           'missing_by_model': {'none': {'job jct_s': 2,
                                         'coflow cct_s': 5}}, 'diag': {}}
    line = b.progress(1, 6, rec, {'none': None})
    assert 'emu -; sim[none] -' in line and '7 unfinished' in line


def _summary(jobs, coflows):
    return {'jobs': {j: {'jct_s': v, 'iteration_time_s': {'mean': v}}
                     for j, v in jobs.items()},
            'coflows': {c: {'cct_s': v} for c, v in coflows.items()},
            'totals': {'avg_cct_s': None}}


def test_emulator_record_errors_and_unfinished_items(tmp_path):
    b = bench()
    sim = _summary({'a': 1.0, 'b': 2.0}, {'a/0': 0.5, 'b/0': 1.0})
    emu = _summary({'a': 1.1, 'b': None}, {'a/0': 0.4, 'b/0': None})
    slow = _summary({'a': 1.1, 'b': 2.2}, {'a/0': 0.4, 'b/0': 1.1})
    rec = b.emu_record('x', 'fair', 0, {'none': sim, 'emulated': slow},
                       emu, str(tmp_path))
    e = rec['errors_by_model']
    assert e['none']['job jct_s'] == pytest.approx(0.1)
    assert e['none']['coflow cct_s'] == pytest.approx(0.2)
    assert e['emulated']['job jct_s'] == pytest.approx(0.0)
    assert e['emulated']['coflow cct_s'] == pytest.approx(0.0)
    assert rec['missing_by_model']['none'] == {'job jct_s': 1,
                                               'coflow cct_s': 1}
    assert rec['diag'] == {}                     # no run.json
    line = b.progress(1, 1, rec, {'none': 1.0, 'emulated': 1.1})
    assert 'sim[none] 1.000: jobs 10.0%, coflows 20.0%' in line
    assert 'sim[emulated] 1.100: jobs 0.0%, coflows 0.0%' in line


def test_matrix_reads_the_errors_against_the_model_asked_for():
    """Records carry errors per simulator packet model; each matrix is
    one model's."""
    b = bench()
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
    fluid = b.matrix(records, sims, ['fair', 'sebf'], 'none')['x']
    packets = b.matrix(records, sims, ['fair', 'sebf'], 'emulated')['x']
    assert fluid['policies']['sebf']['jobs']['mean'] == 0.4
    assert fluid['policies']['sebf']['meets']['job jct_s'] is False
    assert packets['policies']['sebf']['jobs']['mean'] == 0.05
    assert packets['policies']['sebf']['meets']['job jct_s'] is True


def test_diagnostics_read_run_json_and_tolerate_absent_fields(tmp_path):
    import json
    b = bench()
    with open(tmp_path / 'run.json', 'w') as f:
        json.dump({'backend_info': {
            'tcp_retransmits_by_connection': {'hl0#1': 4, 'hl1#2': 9},
            'tcp_timeouts_by_host': {'hl0': 1, 'hl1': None, 'hr0': 2},
            'tcp_rto_recovery_s_by_connection': {'hl0#1': 0.25,
                                                 'hr0#3': 0.5},
            'queue_drops_by_interface': {'s1-eth1': 2, 's1-eth2': 0},
            'ovs_drops_by_port': {'s1-eth1': 0},
            'socket_drops_by_port': {'s1-eth2': 3}}}, f)
    d = b.diagnostics(str(tmp_path))
    assert d == {'retransmits': 13, 'worst_connection': ['hl1#2', 9],
                 'timeouts': 3, 'rto_s': 0.75, 'paused_s': None,
                 'drops': 5, 'drops_at': {'queue': 2, 'socket': 3}}
    with open(tmp_path / 'run.json', 'w') as f:
        json.dump({'backend_info': {'tcp_retransmits': 5,
                                    'paused_s': 0.4}}, f)
    d = b.diagnostics(str(tmp_path))
    assert d == {'retransmits': 5, 'worst_connection': None,
                 'timeouts': None, 'rto_s': None, 'paused_s': 0.4,
                 'drops': None, 'drops_at': {}}


def sensitivity():
    return load_bench('sensitivity_bench')


def test_jitter_delays_each_job_within_the_bound_and_repeats_by_seed():
    m = sensitivity()
    d = {'jobs': [{'id': 'a'}, {'id': 'b', 'arrival_s': 0.3}]}
    one = m.jittered(d, 0.001, 0)
    assert d == {'jobs': [{'id': 'a'}, {'id': 'b', 'arrival_s': 0.3}]}
    delays = [one['jobs'][0]['arrival_s'],
              one['jobs'][1]['arrival_s'] - 0.3]
    assert all(0 <= x <= 0.001 for x in delays) and delays[0] != delays[1]
    assert m.jittered(d, 0.001, 0) == one
    assert m.jittered(d, 0.001, 1) != one


def test_sensitivity_bench_measures_the_simulator_against_itself(tmp_path):
    """On d2-ring, fair sharing moves little under 1 ms of arrival and
    1 ms of send jitter, against the file and between reps; every
    figure is there, one line per rep in runs.jsonl."""
    import json
    sensitivity().main(['--reps', '2', '--only', 'd2-ring', '--policies',
                        'fair,sebf', '--out', str(tmp_path)])
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
    b = bench()
    runs = {('x', 'fair'): {0: summary({'a': 1.0}, {'c': 0.5}),
                            1: summary({'a': 2.0}, {'c': 0.5})},
            ('x', 'sebf'): {0: summary({'a': 1.0}, {'c': 1.0})}}
    got = b.self_errors(runs)
    # rep 1 against rep 0: +100%; rep 0 against rep 1: -50%
    fair = got['x']['fair']
    assert fair['job jct_s'] == {'mean': 0.75, 'min': 0.5, 'max': 1.0,
                                 'n': 2}
    assert fair['coflow cct_s']['max'] == 0.0
    # one rep: no pair, no figure
    assert got['x']['sebf'] == {'job jct_s': None, 'coflow cct_s': None}
    text = b.self_table(got, ['fair', 'sebf'])
    assert 'x            75 / 0' in text and '-' in text.splitlines()[1]
