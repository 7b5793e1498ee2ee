# Two commands from a fresh clone: `make demo` and `make test`.
# Each installs what it needs first (scripts/setup.sh is idempotent).
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup demo test bench lint format clean

setup:
	@bash scripts/setup.sh

demo: setup  ## reproduce the bundled example paper offline; prints the report path
	@$(BIN)/reprolab demo

test: setup  ## unit tests + a real Snakemake/Meep run of the example paper
	@$(BIN)/pytest -q

bench: setup  ## speed and cost numbers -> benchmarks/results/bench.{json,md} (~5 min)
	$(BIN)/python benchmarks/bench.py

lint: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/snakefmt --check Snakefile workflow/rules
	@# Only lint left: no conda env/container per rule (Meep comes from Debian; see envs/README.md).
	-$(BIN)/snakemake --lint --configfile config/demo.yaml

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
	$(BIN)/snakefmt Snakefile workflow/rules

clean:
	rm -rf outputs/*/ .snakemake
