"""A flow policy on the hybrid fabric (issue 13), on the real emulator
and the simulator: the policies of the other issues run unchanged on it.
Its own module: test_circuits.py keeps a fabric of the same switch
names up for its whole module."""
import os

from netsched.pipeline import crosscheck

from .helpers import ROOT, summary


def test_a_flow_policy_runs_unchanged_on_the_hybrid_fabric(tmp_path):
    # SEBF and fair sharing on the hybrid experiment (its circuits under
    # the matching scheduler): both backends rank them the same way, and
    # circuits carry most inter-rack bytes on both
    path = os.path.join(ROOT, 'experiments', 'hybrid.yaml')
    rep = crosscheck.crosscheck(path, ['sebf', 'fair'], str(tmp_path),
                                metric='avg_jct_s', say=lambda m: None)
    assert not rep['disagreements'], crosscheck.table(rep)
    for b in ('sim', 'emu'):
        c = summary(tmp_path, b, 'sebf')['circuits']['total']
        assert c['share'] > 0.5 and c['reconfigurations'] >= 1, (b, c)
