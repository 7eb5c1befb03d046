"""netsched: network flow and coflow scheduling emulator for DL clusters."""
__version__ = "0.1.0"
