"""topologies/*.py load the way `mn --custom` loads them (exec, no
__file__) and build the same graph as netsched.topology."""
import os

import pytest

pytest.importorskip('mininet.topo')
DIR = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'topologies')


@pytest.mark.parametrize('name,args,hosts,switches', [
    ('fattree', ('4',), 16, 20), ('leafspine', ('2', '2', '3'), 6, 4),
    ('dumbbell', ('2',), 4, 2), ('hybrid', ('4', '2', '2'), 8, 7)])
def test_custom_file(name, args, hosts, switches):
    path = os.path.join(DIR, name + '.py')
    scope = {}
    with open(path) as f:
        exec(compile(f.read(), path, 'exec'), scope, scope)
    t = scope['topos'][name](*args)
    assert (len(t.hosts()), len(t.switches())) == (hosts, switches)
