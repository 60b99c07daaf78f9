#!/usr/bin/env bash
# One prepared reader-training run on a GPU machine (the `device` tool runs it in the repo root).
# Needs, carried beside the working tree: .gpu/pairs.jsonl.xz (bench/reader_training_pairs.py)
# and .gpu/tokenizer (the base model's tokenizer files). Continues from the shipped weights;
# returns the fp16 weights in 15 MB parts, their config, SHA256, training record and log in $OUT.
set -euo pipefail
export PYTHONPATH=$PWD RAG_AUDITOR_BASE_MODEL=$PWD/.gpu/tokenizer PYTHONUNBUFFERED=1
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
python3 -m auditor.entailment.train none "$OUT/w" --pairs .gpu/pairs.jsonl.xz \
  --init auditor/entailment/weights --device cuda --batch-size "${BATCH:-64}" \
  --epochs "${EPOCHS:-2}" --lr "${LR:-4e-5}" --threads 8 --eval-per-source 1000 \
  --seed "${SEED:-13}" --time-budget "${TIME_BUDGET:-400}" 2>&1 | tee "$OUT/train.log"
cd "$OUT/w"
rm -rf checkpoint
split -b 15m model.safetensors model.safetensors.part-
rm model.safetensors
ls -la
