"""Metrics from an event log, written as CSV and summary.json (their
figures: netsched.pipeline.plots).

Everything here reads only the event log (netsched.events), so both
backends get identical treatment. summary.json is a stable format
(``format: netsched-summary/1``), documented in docs/experiment-format.md.
The log is read in logread, summarised in summaries, written in csvs;
runfolder reads a run folder as it was left (a run that did not finish,
a damaged one, run.json's backend_info).
"""
from .logread import (  # noqa: F401
    LINK_BLOCK, RUN_EVENTS, Flows, LinkSamples, check_log, compute,
    from_log, iteration_times)
from .summaries import (  # noqa: F401
    CIRCLE_CAP_S, GAP_FLOWS, HURT_SLOWDOWN, SUMMARY_FORMAT, TOTALS,
    circle_arcs, circuit_schedule, circuit_summary, compare, error_stats,
    fault_summary, graph, incomplete_text, longest_gap, shift_summary,
    summarize, tensor_latency)
from .csvs import FLOW_ROWS, write, write_csv  # noqa: F401
from .runfolder import (  # noqa: F401
    DAMAGE, backend_info, damage, diagnostics, load_summary, meta_guess,
    partial, process_alive, process_start, reading, stop_state)
