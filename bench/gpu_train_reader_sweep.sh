#!/usr/bin/env bash
# Several reader-training variants at once on one GPU machine (the `device` tool runs it in the
# repo root), each continuing from the shipped weights on the same prepared pairs. The variant
# with the best mean balanced accuracy on the pair file's eval split (a dev split: the public
# held-out sets and the authored test domains are not in it) comes back as fp16 weights in
# 15 MB parts; every variant's training record and log come back in sweep.tar.
# Needs, carried: .gpu/pairs.jsonl.xz (bench/reader_training_pairs.py) and .gpu/tokenizer.
# VARIANTS: space-separated name:batch:lr:epochs; TIME_BUDGET: training seconds per variant.
set -euo pipefail
export PYTHONPATH=$PWD RAG_AUDITOR_BASE_MODEL=$PWD/.gpu/tokenizer PYTHONUNBUFFERED=1
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
VARIANTS=${VARIANTS:-"a:128:3e-5:3 b:256:5e-5:4"}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
mkdir -p "$OUT/runs"
pids=()
for v in $VARIANTS; do
  IFS=: read -r name batch lr epochs <<<"$v"
  python3 -m auditor.entailment.train none "$OUT/runs/$name" --pairs "${PAIRS:-.gpu/pairs.jsonl.xz}" \
    --init auditor/entailment/weights --device "${DEVICE:-cuda}" --batch-size "$batch" --epochs "$epochs" \
    --lr "$lr" --threads 4 --eval-per-source 1000 --seed "${SEED:-13}" \
    --time-budget "${TIME_BUDGET:-330}" >"$OUT/runs/$name.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "a variant failed (pid $p)"; done
tail -n 3 "$OUT"/runs/*.log
best=$(python3 - "$OUT/runs" <<'PY'
import json, pathlib, sys
rows = []
for rec in sorted(pathlib.Path(sys.argv[1]).glob("*/training_record.json")):
    r = json.loads(rec.read_text())
    after, before = r["held_out"], r["held_out_before"]
    three = {s for s, c in r["held_out_counts"].items() if len(c) == 3 and "not_entailment" not in c}

    def bacc(source, m):  # three-way where the source has three classes, else binary
        return m["balanced_accuracy" if source in three else "binary_balanced_accuracy"]

    mean = sum(bacc(s, m) for s, m in after.items()) / len(after)
    mean0 = sum(bacc(s, m) for s, m in before.items()) / len(before)
    mnli = after.get("taxinli_mnli", {}).get("balanced_accuracy")
    rows.append((mean, rec.parent.name))
    print(f"{rec.parent.name}: steps {r['steps']} stopped by {r['stopped_by']}, mean bacc "
          f"{mean0:.4f} -> {mean:.4f}, taxinli_mnli {mnli}", file=sys.stderr)
print(max(rows)[1])
PY
)
echo "chosen variant: $best"
cd "$OUT"
tar cf sweep.tar runs/*.log runs/*/training_record.json
mv "runs/$best/model.safetensors" "runs/$best/config.json" "runs/$best/training_record.json" .
sha256sum model.safetensors >SHA256
echo "$best" >>SHA256.variant
split -b 15m model.safetensors model.safetensors.part-
rm -rf model.safetensors runs
mv SHA256.variant chosen_variant.txt
ls -la
