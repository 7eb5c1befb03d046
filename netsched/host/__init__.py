"""What runs inside the emulated hosts: the agent (``python -m
netsched.host.agent``), its TCP data path (transport), and the send-side
logic both backends' executors share -- CASSINI's time-shift gate
(shifts) and Prophet's and ByteScheduler's senders (prophet); the
simulator's workload driver imports the last two, so both backends hold
and order sends with the same code.

The agents run on whatever Python the hosts have, so this package uses
the standard library only: no numpy, and nothing of netsched outside
itself (tests/unit/project/test_layout.py imports every module under a plain
interpreter with numpy unimportable).
"""
