"""The workload model: DL model profiles, the task graph of jobs and
tuning stages that both backends execute, and coflow traces."""
