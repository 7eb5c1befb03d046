"""Time shifts (CASSINI): when a shifted job's iteration may start.

The policy decides per job a shift, a period and a tolerance
(``Decision.job_shift``); both backends' executors, the simulator's
workload driver and the emulator's agents, start the job's iterations by
:func:`gate`, so they hold them alike. No numpy: the agents may run on
the system Python.
"""


def gate(t, shift_s, period_s, tolerance_s, max_wait_s=None, first=False):
    """When an iteration that is ready at ``t`` (s since the run's start)
    starts under a time shift, and its drift: iterations start on the grid
    ``shift_s + n period_s``. One ready at most ``tolerance_s`` after a
    grid point starts at once; any other waits for the next grid point
    (an early one for its turn; a late one re-aligns) if that is at most
    ``max_wait_s`` away (None: however far), and otherwise starts at once
    and drifts until its phase comes round. The ``first`` start a worker
    makes on a grid (after the shifts were decided or changed) always
    waits for its grid point: that is the shift. The drift is ``t`` less
    the nearest grid point (negative: early). Both backends' executors
    call this (the simulator's driver and the emulator's agents), so
    they hold iterations alike."""
    phase = (t - shift_s) % period_s
    drift = phase if phase <= period_s / 2 else phase - period_s
    wait = period_s - phase
    if phase <= tolerance_s or (not first and max_wait_s is not None and
                                wait > max_wait_s):
        return t, drift
    return t + wait, drift
