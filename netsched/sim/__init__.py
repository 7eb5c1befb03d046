"""The flow-level (fluid) simulator backend: the event-driven engine,
the workload drivers and the runner. It calls the same policy code as
the controller."""
