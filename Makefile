# The two commands of the README: `make demo` (the main job) and `make test` (the tests).
PYTHON ?= python3

.PHONY: setup demo test test-vllm

setup:
	bash scripts/setup.sh

demo: setup
	envgym demo --suite suites/default.yaml --recipe recipes/smollm2-tool-cpu.yaml --out runs/demo

test: setup
	bash scripts/services.sh
	$(PYTHON) -m pytest -q
	$(MAKE) test-vllm

# The vLLM engine's tests (pytest -m vllm) in an environment of their own (scripts/setup-vllm.sh); `make test`
# runs them after the main suite.
test-vllm:
	bash scripts/setup-vllm.sh
	.venv-vllm/bin/python -m pytest -q -m vllm
