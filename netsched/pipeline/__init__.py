"""The experiment pipeline above the two backends: sweeps, statistics,
figures and reports."""
