"""Hybrid optical-circuit / electrical-packet fabric
(netsched.topology.hybrid) as a Mininet topology: racks whose ToRs have
uplinks to a packet core (spines) and one port on each optical circuit
switch plane (o0, o1, ...: plain OVS bridges whose only rules are the
circuits the controller sets up).

    mn --custom topologies/hybrid.py --topo hybrid,4,2,1,spines=1,oversub=4 \
       --switch ovs,datapath=user,protocols=OpenFlow13 \
       --controller remote,ip=127.0.0.1,port=6653
with `netsched controller --topology hybrid,4,2,1` running for the routes.
"""
import inspect
import os
import sys

_here = inspect.currentframe().f_code.co_filename   # mn exec()s: no __file__
sys.path.insert(0, os.path.dirname(os.path.abspath(_here)))
import _path  # noqa: E402

topos = _path.topos(_here, 'hybrid', 'hybrid', 'racks', 'hosts_per_rack',
                    'circuits')
