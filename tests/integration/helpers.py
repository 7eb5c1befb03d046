import os
import subprocess

from netsched.pipeline import crosscheck, metrics
from netsched.pipeline import report
from netsched.emulator import ovs, runstate
from netsched import topology as topo
from netsched.emulator.mininet_adapter import switch_interfaces

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def leftovers(g, pids=()):
    """Bridges, switch-side interfaces and processes of a fabric that
    still exist."""
    left = [b for b in topo.switches(g) if b in set(ovs.bridges())]
    left += runstate.interfaces_present(switch_interfaces(g))
    left += ['pid %d' % p for p, s in pids if runstate.alive(p, s)]
    veths = subprocess.run(['ip', '-o', 'link', 'show', 'type', 'veth'],
                           capture_output=True, text=True).stdout
    names = set(switch_interfaces(g))
    left += [l for l in veths.split() if l.split('@')[0] in names]
    return left


def check(name, pols, metric, tmp_path, unstable=()):
    """experiments/<name>.yaml by `netsched crosscheck` under pols (the
    policy first, then its baselines): both backends must rank the policy
    against each baseline the same way (the baselines among themselves
    are the fidelity suite's business), but for the ``unstable`` pairs,
    whose order depends on the machine for a measured reason. Returns
    the report and its table, for assertion messages."""
    path = os.path.join(ROOT, 'experiments', name + '.yaml')
    rep = crosscheck.crosscheck(path, pols, str(tmp_path), metric=metric,
                                say=lambda m: None)
    why = crosscheck.table(rep)
    # the crosscheck's report, on what the emulator really measured
    with open(report.write(str(tmp_path))) as f:
        page = f.read()
    assert 'the backends' in page and page.count('<img src="data:') >= 2

    mine = [pq for pq in rep['disagreements'] if pols[0] in pq
            and tuple(pq) not in unstable]
    assert not mine, why
    return rep, why


def summary(tmp_path, backend, pol):
    """The summary of one crosscheck run."""
    return metrics.load_summary(str(tmp_path / ('%s-%s' % (backend, pol))
                                    / 'summary.json'))
