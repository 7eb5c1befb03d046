"""Fixtures the pipeline's tests share."""
import os
import subprocess
import sys

import pytest

from tests.support.tiny import TINY, TINY_RANDOM

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


@pytest.fixture(scope='module')
def tiny(tmp_path_factory):
    """The tiny experiment (tests.support.tiny.TINY) as a file."""
    p = tmp_path_factory.mktemp('exp') / 'tiny.yaml'
    p.write_text(TINY)
    return str(p)


@pytest.fixture(scope='session')
def tiny_sweep(tmp_path_factory):
    """A finished sweep on the simulator, its report included: two
    policies, two seeds, two link rates (8 runs). Tests that change it
    work on a copy."""
    d = tmp_path_factory.mktemp('tiny-sweep')
    exp = d / 'tiny.yaml'
    exp.write_text(TINY_RANDOM)
    out = str(d / 'sweep')
    args = ['sweep', str(exp), '--policies', 'fair,sebf', '--seeds', '1-2',
            '--set', 'link_gbps=10,20', '-j', '2', '--out', out]
    r = subprocess.run([sys.executable, '-m', 'netsched'] + args,
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return {'out': out, 'experiment': str(exp), 'args': args}
