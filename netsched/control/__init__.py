"""The controller's pure core: switch programs, scheduling state and the
OpenFlow messages that apply a policy's decision, and the control
channel's wire format. Nothing here imports Ryu, Mininet or a backend:
the Ryu app in controllers/ is a thin shell that feeds events in and
sends what comes back."""
