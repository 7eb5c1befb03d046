"""The TCP probe's parsing and analysis (netsched.emulator.probe; the
capture itself needs root and a running emulation: used by hand through
benchmarks/tcp_probe.py, docs/emulation.md)."""
import json
import socket
import struct

from netsched.emulator import probe as _probe


def probe():
    return _probe


def frame(src, dst, sport, dport, seq, ack, payload, dscp, flags=0x10,
          ip_id=7):
    tcp = struct.pack('!HHIIBBHHH', sport, dport, seq, ack, 5 << 4, flags,
                      65535, 0, 0)
    total = 20 + len(tcp) + payload
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, dscp << 2, total, ip_id, 0, 64, 6,
                     0, socket.inet_aton(src), socket.inet_aton(dst))
    return b'\0' * 12 + struct.pack('!H', 0x0800) + ip + tcp + \
        b'x' * payload


def test_a_tcp_frame_is_read_to_its_dscp_and_payload():
    p = probe()
    f = frame('10.0.0.3', '10.0.1.3', 20002, 7000, 123, 456, 8948, 8, 0x18)
    assert p.parse_packet(f) == ('10.0.0.3', 20002, '10.0.1.3', 7000, 123,
                                 456, 8948, 8, 0x18, 7)
    arp = b'\0' * 12 + struct.pack('!H', 0x0806) + b'\0' * 28
    assert p.parse_packet(arp) is None
    udp = bytearray(f)
    udp[14 + 9] = 17
    assert p.parse_packet(bytes(udp)) is None


def test_delays_find_packets_held_in_the_fabric_and_silences():
    p = probe()
    A = '10.0.0.3:20002>10.0.1.3:7000'
    pk = []
    for k, t in enumerate((1.0, 1.01, 1.02)):
        pk += [(t, 'sl-eth2', A, 100 + k, 9000, k),
               (t + 0.004, 'sl-eth4', A, 100 + k, 9000, k)]
    # packet 101 waited 0.8 s in sl's queue; its retransmission (another
    # IP id) at 1.5 s overtook it; an ACK (no payload) is not data
    pk[3] = (1.81, 'sl-eth4', A, 101, 9000, 1)
    pk += [(1.5, 'sl-eth2', A, 101, 9000, 5),
           (1.504, 'sl-eth4', A, 101, 9000, 5),
           (3.0, 'sl-eth2', A, 103, 9000, 6),
           (3.004, 'sl-eth4', A, 103, 9000, 6),
           (2.0, 'sl-eth4', A, 104, 0, 8)]
    pk.sort()
    slow, silences = p.delays(pk, 0.1)
    assert slow == [(1.01, 1.81 - 1.01, A, 101)]
    gaps = [(f, round(t, 3), round(g, 3)) for f, t, g in silences]
    assert gaps == [(A, 1.024, 0.48), (A, 1.504, 0.306), (A, 1.81, 1.194)]


def test_hosts_are_found_in_the_run_records(tmp_path):
    p = probe()
    d = tmp_path / 'run1'
    d.mkdir()
    (d / 'state.json').write_text(json.dumps({'pids': [
        {'pid': 11, 'what': 'mininet host hl1'},
        {'pid': 12, 'what': 'mininet host hr1'},
        {'pid': 13, 'what': 'ryu controller'}]}))
    (tmp_path / 'broken').mkdir()
    (tmp_path / 'broken' / 'state.json').write_text('{')
    assert p.host_pids({'hl1', 'hr9'}, str(tmp_path)) == {'hl1': 11}
