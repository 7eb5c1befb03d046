"""Chakra execution traces in and out (workload.chakra): a trace written
with mlc-chakra itself is read, planned, run on the simulator, exported
and read back; malformed traces name their rank file and node id."""
import importlib.util
import os

import pytest

from tests.support import prerequisite

MB = 2 ** 20
B = 8 * MB                  # link bit/s: 1 MiB/s
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def _require():
    """mlc-chakra is netsched[chakra] (make setup installs it)."""
    try:
        from chakra.schema.protobuf import et_def_pb2  # noqa: F401
    except ImportError:
        prerequisite.missing('mlc-chakra is not installed (make setup '
                             'installs it)', module=True)


_require()

from chakra.schema.protobuf import et_def_pb2 as pb   # noqa: E402
from chakra.src.third_party.utils.protolib import encodeMessage  # noqa: E402

from netsched import cli                               # noqa: E402
from netsched.errors import ConfigError                # noqa: E402
from netsched.pipeline import experiment, export, run  # noqa: E402
from netsched.workload import chakra, taskgraph        # noqa: E402


def _example():
    spec = importlib.util.spec_from_file_location(
        'make_example', os.path.join(ROOT, 'workloads', 'chakra',
                                     'make_example.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


make_example = _example()


def exp_of(tmp_path, trace_dir, **job):
    d = {'topology': 'bigswitch,8', 'backend': 'sim', 'link_bps': B,
         'completion_tolerance': 0,
         'jobs': [dict({'id': 'j', 'workload': {'chakra': str(trace_dir)}},
                       **job)]}
    return experiment.from_dict(d, str(tmp_path / 'exp.yaml'))


@pytest.fixture
def trace_dir(tmp_path):
    out = tmp_path / 'et'
    make_example.write(str(out), gradient_bytes=4 * MB,
                       activation_bytes=1 * MB)
    return out


def write_et(path, nodes):
    """A rank file of ``nodes``: (id, type, deps, attrs, micros)."""
    with open(path, 'wb') as f:
        encodeMessage(f, pb.GlobalMetadata(version='1.0.0'))
        for nid, kind, deps, attrs, micros in nodes:
            n = pb.Node(id=nid, name='n%d' % nid, type=kind,
                        duration_micros=micros)
            n.data_deps.extend(deps)
            n.attr.extend(attrs)
            encodeMessage(f, n)


def test_reads_nodes_collectives_and_transfers(tmp_path, trace_dir):
    exp = exp_of(tmp_path, trace_dir)
    spec = exp.jobs[0]
    assert (spec.workers, spec.pattern, spec.model) == (4, 'chakra',
                                                       'example')
    tr = chakra.read(spec.chakra)
    kinds = [[n.kind for n in nodes] for nodes in tr.ranks]
    assert kinds[0] == ['compute', 'compute', 'collective', 'collective',
                        'send']
    assert kinds[2] == ['compute', 'compute', 'collective', 'recv',
                        'compute']
    # the all-reduce over all four, the all-gather of group tp over 0, 1
    assert [[(n.rank, n.collective) for n in c] for c in tr.collectives] == [
        [(r, 'all-reduce') for r in range(4)],
        [(0, 'all-gather'), (1, 'all-gather')]]
    (recv, send), = tr.send_of.items()
    assert recv == (2, 3) and (send.rank, send.id, send.bytes) == (0, 4, MB)
    # a control dependency is a dependency (the receive after the
    # all-reduce)
    assert tr.by_id[2][3].deps == (2,)


def test_plan_expands_collectives_and_keeps_dependencies(tmp_path,
                                                         trace_dir):
    exp = exp_of(tmp_path, trace_dir)
    plan = taskgraph.build(exp)
    sends = [t for t in plan.tasks if t.kind == 'send']
    ring = [t for t in sends if '/all-reduce.' in t.coflow]
    gather = [t for t in sends if '/all-gather.' in t.coflow]
    p2p = [t for t in sends if '/p2p.' in t.coflow]
    # ring all-reduce: 2(p-1) steps of S/p from every rank
    assert len(ring) == 6 * 4 and {t.bytes for t in ring} == {MB}
    assert len({t.coflow for t in ring}) == 6         # a coflow per step
    assert len(gather) == 2 and {t.bytes for t in gather} == {MB // 2}
    (s,) = p2p
    hosts = plan.jobs['j'].workers
    assert (s.host, s.dst, s.bytes) == (hosts[0], hosts[2], MB)
    # the send waits for rank 0's all-gather, the all-gather for the
    # all-reduce's last step to arrive at rank 0, which waits for rank 3's
    # backward pass in a chain of ring steps
    gathered = {t.id for t in gather if t.dst == hosts[0]}
    assert set(s.deps) == gathered
    computes = {t.dur for t in plan.tasks if t.kind == 'compute'
                if t.dur > 0}
    assert computes == {0.002, 0.0025, 0.003, 0.0035, 0.004, 0.001}


def test_runs_exports_and_reads_back(tmp_path, trace_dir):
    exp = exp_of(tmp_path, trace_dir, iterations=2)
    out, s = run.execute(exp, str(tmp_path / 'run'), say=lambda m: None)
    assert s['jobs']['j']['iterations'] == 2
    # export: one file per rank, read back with mlc-chakra's decoder
    folder = export.write(out, 'chakra')
    files = sorted(os.listdir(folder))
    assert files == ['exp.%d.et' % r for r in range(4)]
    other = str(tmp_path / 'cli-et')
    assert cli.main(['export', out, '--format', 'chakra', '--out',
                     other]) == 0
    for f in files:
        with open(os.path.join(folder, f), 'rb') as a, \
                open(os.path.join(other, f), 'rb') as b:
            assert a.read() == b.read()
    plan = taskgraph.build(exp)
    back = exp_of(tmp_path, folder)
    tr = chakra.read(back.jobs[0].chakra)
    # every task a node where it runs, every transfer also a receive
    sends = [t for t in plan.tasks if t.kind == 'send']
    for r, h in enumerate(plan.jobs['j'].workers):
        mine = [t for t in plan.tasks if t.host == h]
        into = [t for t in sends if t.dst == h]
        assert len(tr.ranks[r]) == len(mine) + len(into)
    assert sorted(n.bytes for nodes in tr.ranks for n in nodes
                  if n.kind == 'send') == sorted(t.bytes for t in sends)
    assert sorted(n.dur_s for nodes in tr.ranks for n in nodes
                  if n.kind == 'compute') == sorted(
        t.dur for t in plan.tasks if t.kind in ('compute', 'mark'))
    # dependencies kept: the plan read back runs both iterations in
    # the same time as the run
    _, s2 = run.execute(back, str(tmp_path / 'back'), say=lambda m: None)
    assert s2['jobs']['j']['jct_s'] == pytest.approx(
        s['jobs']['j']['jct_s'], abs=1e-9)


def test_check_reads_the_shipped_example(capsys):
    path = os.path.join(ROOT, 'experiments', 'chakra.yaml')
    assert cli.main(['check', path]) == 0
    out = capsys.readouterr().out
    assert 'job et' in out and 'chakra 4 workers' in out


def test_node_types_map_and_all_reduce_algorithm(tmp_path, trace_dir):
    exp = exp_of(tmp_path, trace_dir)
    tree = exp_of(tmp_path, trace_dir)
    tree = experiment.from_dict(dict(tree.raw, jobs=[dict(
        tree.raw['jobs'][0], workload={'chakra': str(trace_dir),
                                       'all_reduce': 'tree'})]),
                                str(tmp_path / 'exp.yaml'))
    assert tree.jobs[0].chakra.all_reduce == 'tree'
    lanes = {plan_conn for plan_conn in (
        (t.host, t.dst) for t in taskgraph.build(tree).tasks
        if t.kind == 'send' and '/all-reduce.' in t.coflow)}
    ring = {(t.host, t.dst) for t in taskgraph.build(exp).tasks
            if t.kind == 'send' and '/all-reduce.' in t.coflow}
    assert lanes != ring


# ------------------------------------------------------------------ errors

def two_ranks(tmp_path, rank1):
    d = tmp_path / 'bad'
    d.mkdir(exist_ok=True)
    write_et(str(d / 't.0.et'), [(0, pb.COMP_NODE, [], [], 10)])
    write_et(str(d / 't.1.et'), rank1)
    return d


def error(tmp_path, d):
    with pytest.raises(ConfigError) as e:
        exp_of(tmp_path, d)
    return str(e.value)


def test_bad_file_names_the_file(tmp_path):
    d = two_ranks(tmp_path, [])
    (d / 't.1.et').write_bytes(b'{"not": "a trace"}\n')
    msg = error(tmp_path, d)
    assert str(d / 't.1.et') in msg and 'not a Chakra trace' in msg
    (d / 't.1.et').write_bytes(b'')
    assert 'empty' in error(tmp_path, d)


def test_cut_off_file_names_the_node_before(tmp_path):
    d = two_ranks(tmp_path, [(0, pb.COMP_NODE, [], [], 10),
                             (1, pb.COMP_NODE, [0], [], 10)])
    data = (d / 't.1.et').read_bytes()
    (d / 't.1.et').write_bytes(data[:-3])
    msg = error(tmp_path, d)
    assert str(d / 't.1.et') in msg and 'after node 0' in msg


def test_unknown_node_type_names_file_and_node(tmp_path):
    d = two_ranks(tmp_path, [(0, pb.COMP_NODE, [], [], 10),
                             (5, pb.MEM_LOAD_NODE, [0], [], 0)])
    msg = error(tmp_path, d)
    assert str(d / 't.1.et') in msg and 'node 5' in msg
    assert 'MEM_LOAD_NODE is not supported' in msg


def test_unsupported_collective_names_file_and_node(tmp_path):
    A = pb.AttributeProto
    d = two_ranks(tmp_path, [(3, pb.COMM_COLL_NODE, [], [
        A(name='comm_type', int64_val=pb.BARRIER),
        A(name='comm_size', int64_val=0)], 0)])
    msg = error(tmp_path, d)
    assert str(d / 't.1.et') in msg and 'node 3' in msg and 'BARRIER' in msg


def test_dangling_dependency_names_file_and_node(tmp_path):
    d = two_ranks(tmp_path, [(0, pb.COMP_NODE, [], [], 10),
                             (1, pb.COMP_NODE, [0, 42], [], 10)])
    msg = error(tmp_path, d)
    assert str(d / 't.1.et') in msg and 'node 1' in msg
    assert 'node 42' in msg


def test_unmatched_send_and_deadlock_name_file_and_node(tmp_path):
    A = pb.AttributeProto

    def p2p(src, dst):
        return [A(name='comm_src', int32_val=src),
                A(name='comm_dst', int32_val=dst),
                A(name='comm_size', int64_val=MB)]
    d = two_ranks(tmp_path, [(0, pb.COMM_SEND_NODE, [], p2p(1, 0), 0)])
    msg = error(tmp_path, d)
    assert str(d / 't.1.et') in msg and 'node 0' in msg
    assert 'receives nothing' in msg
    # each rank receives before it sends: neither send ever goes
    write_et(str(d / 't.0.et'), [(0, pb.COMM_RECV_NODE, [], p2p(1, 0), 0),
                                 (1, pb.COMM_SEND_NODE, [0], p2p(0, 1), 0)])
    write_et(str(d / 't.1.et'), [(0, pb.COMM_RECV_NODE, [], p2p(0, 1), 0),
                                 (1, pb.COMM_SEND_NODE, [0], p2p(1, 0), 0)])
    msg = error(tmp_path, d)
    assert str(d / 't.0.et') in msg and 'node 0' in msg
    assert 'deadlocks' in msg


def test_errors_on_the_command_line_have_no_traceback(tmp_path, capsys):
    two_ranks(tmp_path, [(7, pb.MEM_STORE_NODE, [], [], 0)])
    path = tmp_path / 'exp.yaml'
    path.write_text('topology: bigswitch,4\nbackend: sim\njobs:\n'
                    '  - workload: {chakra: bad}\n')
    assert cli.main(['check', str(path)]) != 0
    err = capsys.readouterr().err
    assert 't.1.et: node 7' in err and 'Traceback' not in err
