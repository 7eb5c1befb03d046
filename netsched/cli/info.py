"""The commands that describe what there is: the policies and circuit
schedulers a name reaches, and a topology."""
import json
import sys

from .. import topology as topo
from ..errors import NetschedError


def topo_args(p):
    p.add_argument('spec')
    p.add_argument('--json', action='store_true')


def cmd_topo(a):
    g = topo.parse_spec(a.spec)
    if a.json:
        json.dump(topo.to_dict(g), sys.stdout, indent=1, sort_keys=True)
        print()
        return 0
    roles = {}
    for _, d in g.nodes(data=True):
        roles[d['role']] = roles.get(d['role'], 0) + 1
    print('%s: %d nodes, %d links; %s' % (
        a.spec, g.number_of_nodes(), g.number_of_edges(),
        ', '.join('%d %s' % (n, r) for r, n in sorted(roles.items()))))
    return 0


def policies_args(p):
    p.add_argument('--json', action='store_true', help='one JSON object: '
                   '{"policies": [...], "circuits": [...]}')


def cmd_policies(a):
    """Every policy and circuit scheduler a name reaches (built-in or an
    installed package's entry point): parameters, what it is, and how
    each backend carries it out."""
    import textwrap
    from .. import circuits, policies
    out = {}
    for key, reg in (('policies', policies.registry),
                     ('circuits', circuits.registry)):
        out[key] = [dict(reg.describe(x), origin=origin)
                    if not isinstance(x, NetschedError) else
                    {'name': name, 'origin': origin, 'error': str(x)}
                    for name, origin, x in reg.catalogue()]
    if a.json:
        json.dump(out, sys.stdout, indent=1, sort_keys=True)
        print()
        return 0
    for key, title in (('policies', 'Policies (--policy NAME or '
                        'package.module:ClassName; entry points: group '
                        'netsched.policies)'),
                       ('circuits', 'Circuit schedulers (--circuits, '
                        "hybrid fabrics; entry points: group "
                        'netsched.circuits)')):
        print(title)
        for d in out[key]:
            print('\n  %s  [%s]' % (d['name'], d['origin']))
            if 'error' in d:
                print('    error: %s' % d['error'])
                continue
            print(textwrap.fill(d['description'] or '(no description)', 79,
                                initial_indent='    ',
                                subsequent_indent='    '))
            print('    parameters: %s' % (', '.join(
                '%s=%s' % kv for kv in d['params'].items()) or 'none'))
            for b, label in (('sim', 'simulator'), ('emu', 'emulator')):
                for note in d['backends'][b]:
                    print(textwrap.fill(note, 79, initial_indent='    %-11s'
                                        % (label + ':'),
                                        subsequent_indent=' ' * 15))
        print()
    return 0
