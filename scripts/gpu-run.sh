#!/usr/bin/env bash
# A GPU run (docs/scaling.md): on a CUDA machine that has torch, transformers, peft and accelerate but no network,
# install the rest from wheels carried beside the repo, then train the arithmetic and tool recipes with envgym's
# GRPOTrainer and TRL's GRPOTrainer on the same settings (`envgym bench learn --device cuda`, one seed) and print
# each run's JSON: seconds per step, peak GPU memory (peak_gpu_mb) and the reward at every step.
#
#   scripts/gpu-run.sh --download    # on a machine with network: fetch the wheels into $WHEELS (default .whl)
#   scripts/gpu-run.sh               # on the GPU machine: install them to /tmp/envgym-site, then run
#
# STEPS (default 20) sets the steps of each run; PYVER (default 3.12) the GPU machine's Python for --download.
set -euo pipefail
cd "$(dirname "$0")/.."
wheels=${WHEELS:-.whl}
steps=${STEPS:-20}

if [ "${1:-}" = "--download" ]; then
  platforms=()
  for n in 2_17 2_27 2_28 2_31 2_34 2_35; do platforms+=(--platform "manylinux_${n}_x86_64"); done
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version "${PYVER:-3.12}" --implementation cp \
    "${platforms[@]}" --platform manylinux2014_x86_64 --platform any -d "$wheels" -r scripts/gpu-wheels.txt
  echo "wheels in $wheels: $(ls "$wheels" | wc -l)"
  exit 0
fi

python3 -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'; print(torch.cuda.get_device_name(0))"
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/envgym-site "$wheels"/*.whl
export PYTHONPATH="/tmp/envgym-site:$PWD${PYTHONPATH:+:$PYTHONPATH}"  # envgym from this checkout, not installed
for recipe in smollm2-arithmetic-cpu smollm2-tool-cpu; do
  python3 -m envgym bench learn --recipe "recipes/$recipe.yaml" --steps "$steps" --seeds 1 --device cuda --json
done
