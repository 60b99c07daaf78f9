"""ONNX Runtime and dynamic int8 against torch for the two models, in one process.

Not a dependency of the project: install ``onnxruntime`` and ``onnx`` into the
environment first (``pip install onnxruntime onnx``); the script exits with a message
when they are missing. The models are exported offline from the shipped weights (the
entailment reader in ``auditor/entailment/weights``, the packaged MiniLM encoder) into
a temporary folder, optionally fused by ONNX Runtime's BERT optimiser, and quantised
with ``onnxruntime.quantization.quantize_dynamic``. Each variant then runs the same
batches on ``--threads`` threads; the speed relative to torch fp32 (best of
``--repeats`` interleaved runs) and the agreement with torch fp32 are printed.

- ``--part reader``: FaithBench 200-word windows with 30-word claims (about 300
  tokens), batch 32; agreement = share of equal argmax and max |difference| of the
  probabilities.
- ``--part encoder``: WiCE evidence sentences, batch 64, length-sorted; agreement =
  cosine to the torch vectors.

``--no-spin`` turns off the spin-waiting of ONNX Runtime's threads (on a loaded
machine spinning threads steal time from each other; run torch with
``OMP_WAIT_POLICY=PASSIVE`` for the like-for-like comparison).

    python bench/bench_onnx.py --part reader [--n 96] [--no-spin]
    python bench/bench_onnx.py --part encoder [--n 1024] [--no-spin]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibrate_shared import data_dir

from auditor.progress import quiet_third_party

quiet_third_party()

NAMES = ["input_ids", "attention_mask", "token_type_ids"]


def _export(module: Any, sample: dict[str, Any], path: Path, output: str) -> None:
    import torch

    axes: dict[str, dict[int, str]] = {k: {0: "batch", 1: "tokens"} for k in NAMES}
    axes[output] = {0: "batch"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            tuple(sample[k] for k in NAMES),
            str(path),
            input_names=NAMES,
            output_names=[output],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )


def _variants(path: Path, fuse: bool) -> dict[str, Path]:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out = {"ort_fp32": path}
    if fuse:
        from onnxruntime.transformers import optimizer

        fused = path.with_name(path.stem + "_fused.onnx")
        optimizer.optimize_model(
            str(path), model_type="bert", num_heads=12, hidden_size=384, opt_level=1
        ).save_model_to_file(str(fused))
        out["ort_fused_fp32"] = fused
    for name, source in list(out.items()):
        target = source.with_name(source.stem + "_int8.onnx")
        quantize_dynamic(
            str(source),
            str(target),
            weight_type=QuantType.QInt8,
            extra_options={"DefaultTensorType": 1},  # FLOAT, for the exported MatMuls
        )
        out[name.replace("fp32", "int8")] = target
    return out


def _session(path: Path, threads: int, spin: bool) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if not spin:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return np.asarray(e / e.sum(axis=-1, keepdims=True))


def _race(
    variants: dict[str, Callable[[], np.ndarray]],
    n: int,
    repeats: int,
    agree: Callable[[np.ndarray, np.ndarray], str],
    unit: str,
) -> None:
    reference = variants["torch_fp32"]()
    best = dict.fromkeys(variants, np.inf)
    for r in range(repeats):
        for name, run in variants.items():
            t0 = time.perf_counter()
            got = run()
            best[name] = min(best[name], time.perf_counter() - t0)
            if r == 0:
                print(f"  {name:16s} {agree(got, reference)}", flush=True)
    for name in variants:
        print(
            f"  {name:16s} {n / best[name]:8.1f} {unit}/s   "
            f"{best['torch_fp32'] / best[name]:.2f}x torch fp32"
        )


def part_reader(root: Path, n: int, threads: int, spin: bool, repeats: int) -> None:
    import torch
    from bench_entailment import _speed_pairs

    from auditor.entailment.model import INFERENCE_MAX_LENGTH, load_model

    windows, claims = _speed_pairs(root, n)
    fp32, int8 = load_model(), load_model(quantize=True)
    batches = [
        fp32.tokenizer(
            windows[s : s + 32],
            claims[s : s + 32],
            truncation="only_first",
            max_length=INFERENCE_MAX_LENGTH,
            padding=True,
            return_tensors="np",
        )
        for s in range(0, len(windows), 32)
    ]

    def torch_run(model: Any) -> Callable[[], np.ndarray]:
        def run() -> np.ndarray:
            with torch.inference_mode():
                return np.concatenate(
                    [
                        _softmax(
                            model.model(**{k: torch.from_numpy(b[k]) for k in NAMES})
                            .logits.float()
                            .numpy()
                        )
                        for b in batches
                    ]
                )

        return run

    def ort_run(session: Any) -> Callable[[], np.ndarray]:
        def run() -> np.ndarray:
            return np.concatenate(
                [
                    _softmax(session.run(None, {k: b[k].astype(np.int64) for k in NAMES})[0])
                    for b in batches
                ]
            )

        return run

    torch.set_num_threads(threads)
    variants = {"torch_fp32": torch_run(fp32), "torch_int8": torch_run(int8)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "reader.onnx"
        sample = fp32.tokenizer(["a premise"], ["a claim"], return_tensors="pt")
        _export(fp32.model, dict(sample), path, "logits")
        for name, p in _variants(path, fuse=True).items():
            variants[name] = ort_run(_session(p, threads, spin))
    print(f"reader: {len(windows)} pairs, {threads} threads, spinning {spin}")
    _race(
        variants,
        len(windows),
        repeats,
        lambda got, ref: (
            f"argmax agrees with torch fp32 on {np.mean(got.argmax(1) == ref.argmax(1)):.3f}, "
            f"max |dp| {np.abs(got - ref).max():.4f}"
        ),
        "pairs",
    )


def part_encoder(root: Path, n: int, threads: int, spin: bool, repeats: int) -> None:
    import torch

    from auditor.embedding import load_encoder

    rows = [
        json.loads(line)
        for line in (root / "wice" / "claim" / "dev.jsonl").read_text("utf-8").splitlines()
        if line
    ]
    pool = sorted({s.strip() for r in rows for s in r["evidence"] if s.strip()})
    pick = np.random.default_rng(0).choice(len(pool), min(n, len(pool)), replace=False)
    texts = [pool[i] for i in pick]
    order = np.argsort([len(t) for t in texts], kind="stable")
    encoder = load_encoder()
    bert = encoder[0].auto_model

    class Pooled(torch.nn.Module):
        """BERT, mean pooling over the mask and L2 normalisation (the encoder's stack)."""

        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    def ort_run(session: Any) -> Callable[[], np.ndarray]:
        def run() -> np.ndarray:
            out = np.zeros((len(texts), 384), np.float32)
            for s in range(0, len(texts), 64):
                idx = order[s : s + 64]
                enc = encoder.tokenizer(
                    [texts[i] for i in idx],
                    truncation=True,
                    max_length=encoder.max_seq_length,
                    padding=True,
                    return_tensors="np",
                )
                out[idx] = session.run(None, {k: enc[k].astype(np.int64) for k in NAMES})[0]
            return out

        return run

    torch.set_num_threads(threads)
    variants: dict[str, Callable[[], np.ndarray]] = {
        "torch_fp32": lambda: np.asarray(
            encoder.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
        )
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "encoder.onnx"
        sample = encoder.tokenizer(["a sentence"], return_tensors="pt")
        _export(Pooled(bert).eval(), dict(sample), path, "embedding")
        for name, p in _variants(path, fuse=False).items():
            variants[name] = ort_run(_session(p, threads, spin))
    print(f"encoder: {len(texts)} WiCE sentences, {threads} threads, spinning {spin}")
    _race(
        variants,
        len(texts),
        repeats,
        lambda got, ref: (
            f"cosine to torch fp32: mean {np.mean(np.sum(got * ref, 1)):.4f}, "
            f"min {np.min(np.sum(got * ref, 1)):.4f}"
        ),
        "sentences",
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("reader", "encoder"), required=True)
    ap.add_argument("--data", default=None)
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--no-spin", action="store_true")
    args = ap.parse_args()
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        sys.exit("bench_onnx needs onnxruntime and onnx: pip install onnxruntime onnx")
    root = data_dir(args.data)
    if args.part == "reader":
        part_reader(root, args.n or 96, args.threads, not args.no_spin, args.repeats)
    else:
        part_encoder(root, args.n or 1024, args.threads, not args.no_spin, args.repeats)


if __name__ == "__main__":
    main()
