# netsched: the two commands in the README are `make demo` and `make test`.
# Both run tools/bootstrap.sh first, which installs only what is missing.
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: setup demo test lint unit bench bench-fabric bench-workload bench-sim \
	bench-controller bench-fidelity bench-decide bench-policies \
	bench-circuits bench-sensitivity bench-sweep bench-reference \
	bench-soak bench-ns3 bench-llm reproduce reproduce-sim hero clean
setup:
	@bash tools/bootstrap.sh

demo: setup
	$(VENV)/bin/netsched demo

# A run killed outright (SIGKILL, a session stopped mid-run) cannot tear
# down; its record names what it left. Clear those first (only runs whose
# owner process is gone, by recorded name and pid), so the fabric tests
# do not fail on another run's bridges. The slowest tests are listed at
# the end: the suite, set-up included, must stay within CI's ~20 minutes.
test: setup lint
	$(VENV)/bin/netsched clean
	$(PY) -m pytest -q -rs --durations=25 tests

# style and errors, and a ceiling on a function's branches (pyproject.toml)
lint: setup
	$(VENV)/bin/ruff check netsched controllers tests benchmarks topologies \
	  tools workloads experiments

# Each seed policy against its paper's baselines (docs/reproduction.md):
# the simulator over every seed and axis value, then the emulator's
# reduced set (root); resumes where an interrupted one stopped.
reproduce: setup
	$(VENV)/bin/netsched reproduce experiments/reproduce/study.yaml \
		--backend both --out results/reproduce

reproduce-sim: setup
	$(VENV)/bin/netsched reproduce experiments/reproduce/study.yaml \
		--backend sim --out results/reproduce

# The README's figure (docs/img/fair-vs-sebf-cdf.png): the quick start's
# sweep, simulator only (no root; ~1 min on two cores), re-run from
# scratch and drawn as a user's report draws it. Needs .venv (make setup,
# or a venv with `pip install .`).
HERO := results/hero
hero:
	$(VENV)/bin/netsched sweep experiments/demo.yaml --backend sim \
		--policies fair,sebf --seeds 1-3 --force --no-report --no-figures \
		--out $(HERO)
	$(VENV)/bin/netsched report $(HERO) --format png
	cp $(HERO)/figures/cdf_sim.png docs/img/fair-vs-sebf-cdf.png

# the fast unit run: tests marked slow (minutes each) are left to `make test`
unit: setup
	$(PY) -m pytest -q -rs -m "not slow" tests/unit

bench: bench-fabric bench-workload bench-sim bench-controller bench-fidelity \
	bench-sensitivity bench-decide bench-policies bench-circuits bench-sweep \
	bench-reference bench-soak bench-ns3 bench-llm

bench-fabric: setup
	$(PY) benchmarks/fabric_bench.py

# ns-3 backend speed (no root): packet hops per second of wall time
bench-ns3: setup
	$(PY) benchmarks/ns3_bench.py --reps 2 --mb 200 --perm-mb 20

# LLM workloads on the simulator (no root): a GPT-3 13B iteration on 128
# hosts, a Mixtral job on a 1,024-host fat-tree, and how both grow
bench-llm: setup
	$(PY) benchmarks/llm_bench.py --reps 3

bench-workload: setup
	$(PY) benchmarks/workload_bench.py

# The speed-up over CoflowSim is measured side by side only with a
# CoflowSim checkout or bare repository: make bench-sim COFLOWSIM=DIR
# (then one CoflowSim run per scheduler, about 45 minutes in all);
# without it, against its recorded wall times.
bench-sim: setup
	$(PY) benchmarks/sim_bench.py --skip-fattree \
	    $(if $(COFLOWSIM),--coflowsim $(COFLOWSIM),--reps 3)
	$(PY) benchmarks/sim_bench.py --scale 8,16,24,32

# AGAINST=REV runs an older commit's benchmark first and prints the ratios
bench-controller: setup
	$(PY) benchmarks/controller_bench.py $(if $(AGAINST),--against $(AGAINST))

bench-fidelity: setup
	$(PY) benchmarks/fidelity_bench.py

bench-sensitivity: setup
	$(PY) benchmarks/sensitivity_bench.py

bench-decide: setup
	$(PY) benchmarks/decide_bench.py

bench-policies: setup
	$(PY) benchmarks/policy_bench.py

bench-circuits: setup
	$(PY) benchmarks/circuit_bench.py --reps 2

bench-sweep: setup
	$(PY) benchmarks/sweep_bench.py

# The reference models against the tools they follow (CoflowSim's
# recorded averages on the Facebook trace); add --coflowsim DIR to build
# and run CoflowSim itself beside them (benchmarks/reference_bench.py).
bench-reference: setup
	$(PY) benchmarks/reference_bench.py

# The demo 20 times on the emulator (root), then what is left against a
# baseline (docs/benchmarks.md): about 10 minutes (a demo run is ~25 s),
# so it is in `make bench`, last, where its failing stops nothing else.
# Exits non-zero if anything is left or a run failed.
bench-soak: setup
	$(PY) benchmarks/soak_bench.py

clean: setup
	$(VENV)/bin/netsched clean
