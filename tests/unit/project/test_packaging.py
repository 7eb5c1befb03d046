"""What the package ships and declares: the licence and citation files,
the runtime dependencies, and a wheel that runs the demo without the
checkout (``pip install .``, simulator only, no root)."""
import ast
import configparser
import os
import shutil
import subprocess
import sys
import sysconfig

import pytest
import yaml

import netsched

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def setup_cfg():
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, 'setup.cfg'))
    return cfg


def requirements(text):
    return [line.strip() for line in text.splitlines() if line.strip()]


def test_license_is_the_declared_one():
    with open(os.path.join(ROOT, 'LICENSE')) as f:
        text = f.read()
    assert setup_cfg()['metadata']['license'] == 'Apache-2.0'
    assert 'Apache License' in text and 'Version 2.0, January 2004' in text
    assert 'END OF TERMS AND CONDITIONS' in text


def test_citation_names_this_version():
    with open(os.path.join(ROOT, 'CITATION.cff')) as f:
        cff = yaml.safe_load(f)
    # the keys the Citation File Format 1.2.0 requires
    assert cff['cff-version'] == '1.2.0'
    assert cff['message'] and cff['title'].startswith('netsched')
    assert cff['authors'] and all('name' in a or 'family-names' in a
                                  for a in cff['authors'])
    assert cff['version'] == netsched.__version__ \
        == setup_cfg()['metadata']['version']
    assert cff['license'] == setup_cfg()['metadata']['license']


def test_scapy_is_for_the_tests_only():
    """scapy is in the test extra, and nothing the package runs imports
    it (only tests/integration sniffs packets)."""
    opts = setup_cfg()['options']
    assert not any(r.startswith('scapy')
                   for r in requirements(opts['install_requires']))
    extras = setup_cfg()['options.extras_require']
    assert any(r.startswith('scapy') for r in requirements(extras['test']))
    for folder in ('netsched', 'controllers', 'topologies'):
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in files:
                if not name.endswith('.py'):
                    continue
                path = os.path.join(dirpath, name)
                with open(path) as f:
                    tree = ast.parse(f.read(), path)
                for node in ast.walk(tree):
                    mods = [a.name for a in node.names] \
                        if isinstance(node, ast.Import) else \
                        [node.module or ''] \
                        if isinstance(node, ast.ImportFrom) else []
                    assert not any(m.split('.')[0] == 'scapy'
                                   for m in mods), path


def test_checkout_reads_its_own_data():
    """From the checkout (editable install) ROOT is the checkout; the
    package's _data/ links to the same folders for the wheel."""
    assert os.path.samefile(netsched.ROOT, ROOT)
    for d in ('workloads', 'experiments'):
        assert os.path.samefile(
            os.path.join(ROOT, 'netsched', '_data', d),
            os.path.join(ROOT, d))


# what a build of the checkout does not read: version control, virtual
# environments, outputs, caches and downloaded traces
NOT_BUILT = ('.git', '.venv', 'venv', 'results', 'build', 'dist', 'data',
             '*.egg-info', '__pycache__', '.pytest_cache', '.hypothesis')


@pytest.mark.slow          # about 10 s: builds, installs and runs a wheel
def test_wheel_runs_the_demo_outside_the_checkout(tmp_path):
    """``pip install .``'s route: the wheel, built from a copy of the
    checkout, installed in a fresh virtual environment, runs ``netsched
    demo --backend sim`` from a folder far from the checkout, reading
    the model profiles and experiments it ships."""
    src = tmp_path / 'src'
    # a copy, so the build's build/ and egg-info never land in the
    # shared checkout; symlinks kept, as git keeps them
    shutil.copytree(ROOT, src, symlinks=True,
                    ignore=shutil.ignore_patterns(*NOT_BUILT))
    dist = tmp_path / 'dist'
    pip = ['-m', 'pip', '--disable-pip-version-check', '-q']
    r = subprocess.run([sys.executable] + pip + [
        'wheel', '--no-deps', '--no-build-isolation', '-w', str(dist), '.'],
        cwd=src, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    wheels = list(dist.glob('netsched-*.whl'))
    assert len(wheels) == 1, wheels

    venv = tmp_path / 'venv'
    r = subprocess.run([sys.executable, '-m', 'venv',
                        '--system-site-packages', str(venv)],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    py = str(venv / 'bin' / 'python')
    # installed before the dependencies are visible, so pip sees no
    # netsched already installed (the checkout's editable one)
    r = subprocess.run([py] + pip + ['install', '--no-deps', '--no-index',
                                     str(wheels[0])],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    # the dependencies from this interpreter's site-packages, offline: a
    # plain path line, so their .pth files (the checkout's editable
    # finder among them) are not run
    site = subprocess.run([py, '-c', 'import sysconfig; '
                           'print(sysconfig.get_paths()["purelib"])'],
                          capture_output=True, text=True, check=True,
                          timeout=60).stdout.strip()
    deps = sorted({sysconfig.get_paths()[k] for k in ('purelib', 'platlib')})
    with open(os.path.join(site, 'zz-netsched-test-deps.pth'), 'w') as f:
        f.write('\n'.join(deps) + '\n')

    away = tmp_path / 'away'
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
    r = subprocess.run([py, '-c', 'import netsched; print(netsched.ROOT)'],
                       cwd=away, env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith(site), r.stdout
    r = subprocess.run([str(venv / 'bin' / 'netsched'), 'demo', '--backend',
                        'sim', '--out', 'demo'], cwd=away, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert 'jobs: 3 done of 3' in r.stdout, r.stdout
    assert (away / 'demo' / 'report.html').is_file()
    # the user: a five-seed sweep from Python, its coflows into
    # pandas (the bundled two-ring dumbbell, no figures to stay quick)
    r = subprocess.run([py, '-c', (
        'import netsched\n'
        'd = netsched.sweep("fidelity/d2-ring", policies="fair,sebf", '
        'seeds="1-5", out="sw", figures=False)\n'
        'df = netsched.load(d, table="coflows")\n'
        'print(len(df), sorted(int(s) for s in df["seed"].unique()), '
        'sorted(df["policy"].unique()))\n')], cwd=away, env=env,
        capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    n, rest = r.stdout.strip().splitlines()[-1].split(' ', 1)
    assert int(n) > 0 and rest == "[1, 2, 3, 4, 5] ['fair', 'sebf']", \
        r.stdout
