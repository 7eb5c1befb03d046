"""Write the example Chakra trace (experiments/chakra.yaml runs it) with
mlc-chakra's own schema and encoder, as a framework's converter would:

    python workloads/chakra/make_example.py [OUT_DIR]

Four ranks, one training step each: a forward and a backward compute
node, an all-reduce of the gradients over all four, an all-gather over
ranks 0 and 1 (process group "tp"), then rank 0 sends an activation to
rank 2 (a send/receive pair) and rank 2 computes on it. Dependencies are
data and control dependencies both. tests/unit/workload/test_chakra.py writes its
traces with the same function."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def write(out_dir, name='example', ranks=4, gradient_bytes=8 << 20,
          activation_bytes=2 << 20):
    """Write ``out_dir/<name>.<rank>.et``; returns the paths."""
    from chakra.schema.protobuf import et_def_pb2 as pb
    from chakra.src.third_party.utils.protolib import encodeMessage
    A = pb.AttributeProto
    paths = []
    os.makedirs(out_dir, exist_ok=True)
    for r in range(ranks):
        nodes = []

        def node(name, kind, deps=(), ctrl=(), micros=0, attrs=()):
            n = pb.Node(id=len(nodes), name=name, type=kind,
                        duration_micros=micros)
            n.data_deps.extend(deps)
            n.ctrl_deps.extend(ctrl)
            n.attr.append(A(name='is_cpu_op', bool_val=False))
            n.attr.extend(attrs)
            nodes.append(n)
            return n.id
        fwd = node('forward', pb.COMP_NODE, micros=2000 + 500 * r)
        bwd = node('backward', pb.COMP_NODE, deps=[fwd], micros=4000)
        ar = node('all_reduce gradients', pb.COMM_COLL_NODE, deps=[bwd],
                  attrs=[A(name='comm_type', int64_val=pb.ALL_REDUCE),
                         A(name='comm_size', int64_val=gradient_bytes)])
        last = ar
        if r in (0, 1):
            last = node('all_gather tp', pb.COMM_COLL_NODE, deps=[ar],
                        attrs=[A(name='comm_type', int64_val=pb.ALL_GATHER),
                               A(name='comm_size', int64_val=1 << 20),
                               A(name='pg_name', string_val='tp')])
        if r == 0:
            node('send activation', pb.COMM_SEND_NODE, deps=[last],
                 attrs=[A(name='comm_src', int32_val=0),
                        A(name='comm_dst', int32_val=2),
                        A(name='comm_size', int64_val=activation_bytes),
                        A(name='comm_tag', int32_val=7)])
        if r == 2:
            recv = node('recv activation', pb.COMM_RECV_NODE, ctrl=[ar],
                        attrs=[A(name='comm_src', int32_val=0),
                               A(name='comm_dst', int32_val=2),
                               A(name='comm_size', int64_val=activation_bytes),
                               A(name='comm_tag', int32_val=7)])
            node('use activation', pb.COMP_NODE, deps=[recv], micros=1000)
        path = os.path.join(out_dir, '%s.%d.et' % (name, r))
        with open(path, 'wb') as f:
            encodeMessage(f, pb.GlobalMetadata(version='1.0.0'))
            for n in nodes:
                encodeMessage(f, n)
        paths.append(path)
    return paths


if __name__ == '__main__':
    for p in write(sys.argv[1] if len(sys.argv) > 1 else HERE):
        print(p)
