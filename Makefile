# Two commands from a fresh clone: `make demo` and `make test`.
# Each installs what it needs first (scripts/setup.sh is idempotent).
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup demo test doctor bench lint format clean

setup:
	@bash scripts/setup.sh

demo: setup  ## reproduce the two bundled example papers offline; prints the reports and their index
	@$(BIN)/reprolab demo

test: setup  ## unit tests + a real Snakemake/Meep run of the example paper
	@# Three processes, a test file each at a time (module fixtures stay in one): two
	@# kept two cores 61 % busy (35 CPU-min in 29 min), waiting on process start-up,
	@# Snakemake, Slurm and MPI; three keep them 69 % busy (44 CPU-min in 32 min).
	@$(BIN)/pytest -q -n 3 --dist loadfile

doctor: setup  ## check this site before a long run (add --slurm: make doctor ARGS=--slurm)
	@$(BIN)/reprolab doctor $(ARGS)

bench: setup  ## speed and cost numbers -> benchmarks/results/bench.{json,md} (~5 min)
	$(BIN)/python benchmarks/bench.py

lint: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/snakefmt --check Snakefile workflow/rules
	@# Only lint left: no conda env on the agent rules (only simulate needs Meep; envs/README.md).
	-$(BIN)/snakemake --lint --configfile config/demo.yaml

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
	$(BIN)/snakefmt Snakefile workflow/rules

clean:
	rm -rf outputs/*/ .snakemake
