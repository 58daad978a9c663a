#!/bin/bash
# The checks that need a GPU, as one script for a lent machine (the `device` tool): the CUDA
# tests of tests/llm/test_devices.py, then the speed targets of issues 19, 23 and 27 measured on
# the GPU (batched against one at a time, both on the GPU).
#
# The machine has torch, transformers and most of the scientific stack but nothing from PyPI, and
# it takes at most 64 MiB of working tree, so `.devcheck/` (git-ignored, carried; built here by
# scripts/gpu_prepare.sh) holds:
#   site.tar.xz     the missing pure-Python packages and py3.12 wheels, unpacked (inspect_ai
#                   without its viewer and sandbox binaries, pydantic, ...)
#   smollm2-arch/   SmolLM2-135M-Instruct's config, tokenizer and chat template (no weights: the
#                   98 MB GGUF does not fit; the model gets random weights of the same shape, which
#                   costs the same arithmetic: every timed path here runs a fixed number of tokens)
# Run: DEVICE=cuda bash scripts/gpu_checks.sh   (OUT=folder for the logs; PY=python to use)
# A dry run on the CPU here: DEVICE=cpu PY=.venv/bin/python SMALL=1 bash scripts/gpu_checks.sh
# PARTS picks what runs (default all): any of tests casebench sae watermark, e.g.
# PARTS="tests watermark" DEVICE=cuda bash scripts/gpu_checks.sh
set -u
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
DEVICE=${DEVICE:-cuda}
PY=${PY:-python3}
OUT=${OUT:-/tmp/gpu-checks}
mkdir -p "$OUT"
if [ "$PY" = python3 ]; then
    mkdir -p /tmp/site && tar -C /tmp/site -xJf .devcheck/site.tar.xz || exit 1
    export PYTHONPATH="$PWD/src:/tmp/site"
fi
export TRUSTLAB_CACHE=/tmp/trustlab-cache
M=/tmp/smollm2-135m-instruct-random
if [ -n "${SMALL:-}" ]; then N=6; R=1; T=8; B=4; I=8; IB=4; else N=60; R=10; T=256; B=32; I=512; IB=64; fi
PARTS=${PARTS:-tests casebench sae watermark}
step() { echo "=== $(date +%T) $*"; }
part() { case " $PARTS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

step "machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null
$PY -c "import sys, torch, transformers, inspect_ai; print(sys.version.split()[0], 'torch', torch.__version__, 'transformers', transformers.__version__, 'inspect_ai', inspect_ai.__version__, 'cuda', torch.cuda.is_available())"

step "SmolLM2-135M-Instruct's shape with random weights"
$PY - "$M" <<'PYEOF' || exit 1
import sys, torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
src, dst = ".devcheck/smollm2-arch", sys.argv[1]
torch.manual_seed(0)
model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(src))
model.save_pretrained(dst)
AutoTokenizer.from_pretrained(src).save_pretrained(dst)
print("saved", dst, sum(p.numel() for p in model.parameters()), "parameters")
PYEOF

if part tests; then
step "tests/llm/test_devices.py"
timeout 120 $PY -m pytest -q -p no:cacheprovider tests/llm/test_devices.py 2>&1 | tee "$OUT/tests.txt" | tail -20
fi

if part casebench; then
step "issue 19: CASE-Bench logit mode"
timeout 240 $PY benchmarks/bench_casebench.py --model "$M" --device "$DEVICE" --n "$N" --repeat "$R" 2>&1 | grep -v "it/s\]" | tee "$OUT/casebench.txt"
fi

if part sae; then
step "issue 23: latent caching"
timeout 100 $PY benchmarks/bench_sae.py --part cache --model "$M" --device "$DEVICE" --texts "$T" --batch-size "$B" 2>&1 | tee "$OUT/sae.txt"
fi

if part watermark; then
step "issue 27: watermark prediction"
for bs in $IB 8; do
    timeout 60 $PY benchmarks/bench_watermark.py --part prediction --device "$DEVICE" --images "$I" --batch-size "$bs" 2>&1 | tee -a "$OUT/watermark.txt"
done
fi
step "done"
