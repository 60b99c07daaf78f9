"""What the checkpoint judges share: finding a checkpoint, its identity, its labels,
chunking long evidence, and the base class :class:`CheckpointJudge`.

**Finding a checkpoint.** ``checkpoint`` is a local folder (``config.json``, the weight
files, the tokenizer files) or a model-hub id (``"lytang/MiniCheck-RoBERTa-Large"``).
A hub id is looked up in the local hub cache; it is downloaded only when the judge is
given ``allow_download = true`` or the environment has ``AUDITOR_ALLOW_DOWNLOAD=1``
(offline is the default). Remote code is never executed: every checkpoint is loaded with
the standard ``transformers`` classes and ``trust_remote_code=False``.

**Identity.** A checkpoint judge's digest covers, besides its parameters, the
checkpoint's revision (``_commit_hash`` of its ``config.json``, else the hub cache's
snapshot folder name, else ``None``), the sha256 of its weight files
(``weights_sha256``) and that of its other files (config and tokenizer,
``files_sha256``): the panel digest, the run id and the ledger change when the
checkpoint changes, not when its folder moves (``checkpoint`` itself is volatile).

**Labels.** A sequence classifier's classes are read from its own ``config.id2label``
and mapped to three roles (:data:`ROLES`): ``support``, ``contradict`` and
``neither``. Known names (:data:`KNOWN_LABELS`, case and ``-``/space insensitive) map
themselves; a ``label_map`` parameter maps others (``{"LABEL_0" = "neither",
"LABEL_1" = "support"}``); an unknown name is an error naming it.

**Chunks.** Evidence longer than a checkpoint reads is cut into chunks; a claim's
support is the **maximum over the chunks** of every evidence passage (a fact stated in
one chunk is supported, whatever else the evidence says: MiniCheck's and AlignScore's
rule) and the chunk with the most support is the decisive one (:func:`max_over_chunks`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from auditor.digest import content_digest, sha256_bytes
from auditor.errors import ConfigError
from auditor.judges.base import LocalJudge, band
from auditor.text.sentences import sentences
from auditor.types import ABSTAIN, CONTRADICTION, JudgePair

Result = tuple[float, dict[str, float], str]

ALLOW_DOWNLOAD_ENV = "AUDITOR_ALLOW_DOWNLOAD"
"""Set to ``1`` to let checkpoint judges download hub checkpoints (off by default)."""

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack")
"""Files of a checkpoint folder whose sha256 is ``weights_sha256``."""

ROLES = ("support", "contradict", "neither")
"""What a class of a checkpoint says of the claim."""

KNOWN_LABELS: Mapping[str, str] = {
    **dict.fromkeys(
        ("entailment", "entailed", "entails", "supported", "support", "supports"), "support"
    ),
    **dict.fromkeys(("consistent", "factual", "faithful", "grounded"), "support"),
    **dict.fromkeys(
        ("contradiction", "contradicted", "contradicts", "refuted", "refutes"), "contradict"
    ),
    **dict.fromkeys(("neutral", "not_supported", "unsupported", "not_enough_info"), "neither"),
    **dict.fromkeys(("nei", "hallucinated", "hallucination", "inconsistent"), "neither"),
}
"""Label names mapped without a ``label_map`` (after :func:`_label_key`)."""

_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")


def download_allowed(allow_download: bool) -> bool:
    """Whether hub downloads are allowed: by the judge's ``allow_download`` parameter or
    ``AUDITOR_ALLOW_DOWNLOAD=1``."""
    return allow_download or os.environ.get(ALLOW_DOWNLOAD_ENV, "") == "1"


def resolve_checkpoint(
    checkpoint: str, *, judge: str, allow_download: bool, revision: str | None = None
) -> Path:
    """The local folder of ``checkpoint``: the folder itself, or a hub id's snapshot in
    the local hub cache (downloaded first when :func:`download_allowed`). Errors name
    the judge, the parameter and how to allow a download."""
    if not isinstance(checkpoint, str) or not checkpoint.strip():
        raise ConfigError(f"{judge}: checkpoint: expected a folder or a model-hub id")
    folder = Path(checkpoint).expanduser()
    if folder.is_dir():
        return folder
    if folder.exists():
        raise ConfigError(f"{judge}: checkpoint {checkpoint!r} is a file, not a folder")
    if not _HUB_ID.fullmatch(checkpoint):
        raise ConfigError(f"{judge}: checkpoint folder {checkpoint!r} not found")
    from huggingface_hub import snapshot_download

    online = download_allowed(allow_download)
    try:
        return Path(snapshot_download(checkpoint, revision=revision, local_files_only=not online))
    except Exception as exc:  # the hub client's errors differ by version
        if online:
            raise ConfigError(
                f"{judge}: checkpoint {checkpoint!r}: download failed ({type(exc).__name__}: {exc})"
            ) from None
        raise ConfigError(
            f"{judge}: checkpoint {checkpoint!r} is neither a local folder nor in the local "
            f"model-hub cache, and downloads are off (offline is the default). Give a local "
            f"folder as `checkpoint`, or allow the download with `allow_download = true` in "
            f"the judge's params or {ALLOW_DOWNLOAD_ENV}=1 in the environment"
        ) from None


@dataclass(frozen=True)
class CheckpointInfo:
    """A resolved checkpoint: its folder, parsed ``config.json`` and identity."""

    folder: Path
    config: Mapping[str, Any]
    revision: str | None
    weights_sha256: str
    files_sha256: str

    def identity(self) -> dict[str, Any]:
        """What enters the judge's digest."""
        return {
            "checkpoint_revision": self.revision,
            "weights_sha256": self.weights_sha256,
            "files_sha256": self.files_sha256,
        }


def checkpoint_info(folder: Path, *, judge: str) -> CheckpointInfo:
    """Read ``folder``'s ``config.json`` and digest its files (cached per folder and
    file sizes and modification times, so a replaced file is digested again)."""
    try:
        files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    except OSError as exc:
        raise ConfigError(f"{judge}: checkpoint folder {folder}: {exc.strerror}") from None
    state = tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    return _checkpoint_info(str(folder.resolve()), state, judge)


@lru_cache(maxsize=32)
def _checkpoint_info(
    folder: str, state: tuple[tuple[str, int, int], ...], judge: str
) -> CheckpointInfo:
    root = Path(folder)
    path = root / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(config, dict):
            raise ValueError("expected a JSON object")
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{judge}: {path}: no readable config ({exc})") from None
    digests = {name: sha256_bytes((root / name).read_bytes()) for name, _, _ in state}
    weights = {n: d for n, d in digests.items() if n.endswith(WEIGHT_SUFFIXES)}
    if not weights:
        raise ConfigError(
            f"{judge}: checkpoint folder {root} has no weight files "
            f"({', '.join('*' + s for s in WEIGHT_SUFFIXES[:2])})"
        )
    others = {n: d for n, d in digests.items() if n not in weights}
    revision = config.get("_commit_hash")
    if revision is None and root.parent.name == "snapshots":  # a hub cache snapshot
        revision = root.name
    return CheckpointInfo(
        folder=root,
        config=config,
        revision=str(revision) if revision is not None else None,
        weights_sha256=content_digest(weights),
        files_sha256=content_digest(others),
    )


def _label_key(label: str) -> str:
    return re.sub(r"[\s-]+", "_", str(label).strip().lower())


def label_roles(
    config: Mapping[str, Any],
    label_map: Mapping[str, str] | None,
    *,
    judge: str,
    source: str,
    defaults: Mapping[str, str] | None = None,
) -> tuple[str, ...]:
    """The role (:data:`ROLES`) of each class, in output order, from the checkpoint
    ``config``'s ``id2label`` (read from ``source``; ``LABEL_0`` ... ``LABEL_{n-1}`` for a
    config that names none, as ``transformers`` saves default names): ``label_map``
    first, then ``defaults`` (the documented head of a named checker), then
    :data:`KNOWN_LABELS`. An unknown name is an error naming it and saying how to map it."""
    id2label = config.get("id2label") or {
        i: f"LABEL_{i}" for i in range(int(config.get("num_labels", 2)))
    }
    try:
        names = [str(id2label[k]) for k in sorted(id2label, key=lambda k: int(k))]
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{judge}: {source}: field 'id2label': not id -> name ({exc})") from None
    wanted = {**(defaults or {}), **(label_map or {})}
    roles = []
    for name in names:
        role = wanted.get(name) or KNOWN_LABELS.get(_label_key(name))
        if role is None:
            raise ConfigError(
                f"{judge}: {source}: label {name!r} of config.id2label is not one this judge "
                f"knows; map it with the `label_map` parameter, e.g. "
                f'label_map = {{ {name} = "support" }} (one of {", ".join(ROLES)})'
            )
        roles.append(role)
    if "support" not in roles:
        raise ConfigError(
            f"{judge}: {source}: no class of {names} means support; map one with `label_map`"
        )
    return tuple(roles)


def check_label_map(label_map: Mapping[str, str] | None, *, judge: str) -> dict[str, str] | None:
    """``label_map`` validated: names to one of :data:`ROLES`."""
    if label_map is None:
        return None
    if not isinstance(label_map, Mapping):
        raise ConfigError(f"{judge}: label_map: expected a table of label -> role")
    for name, role in label_map.items():
        if role not in ROLES:
            raise ConfigError(
                f"{judge}: label_map: {name!r} -> {role!r}: role must be one of {', '.join(ROLES)}"
            )
    return dict(label_map)


def role_probabilities(probs: np.ndarray, roles: Sequence[str]) -> np.ndarray:
    """``(n, 3)``: per row the summed probability of the ``support``, ``contradict`` and
    ``neither`` classes."""
    out = np.zeros((probs.shape[0], len(ROLES)), dtype=np.float64)
    for column, role in enumerate(roles):
        out[:, ROLES.index(role)] += probs[:, column]
    return out


def max_over_chunks(chunk_probs: Sequence[np.ndarray]) -> tuple[int, np.ndarray]:
    """The decisive chunk (the most support, first on ties) and its role probabilities:
    a claim's support is the maximum over chunks."""
    if not chunk_probs:
        raise ValueError("max_over_chunks: no chunks")
    best = int(np.argmax([float(p[0]) for p in chunk_probs]))
    return best, np.asarray(chunk_probs[best], dtype=np.float64)


def token_windows(
    text: str, offsets: Sequence[tuple[int, int]], window: int, overlap: int
) -> list[str]:
    """``text`` cut into windows of ``window`` tokens, ``overlap`` tokens shared by
    neighbours, each the exact text from its first token's start to its last token's end
    (``offsets``: the tokens' character spans, special tokens excluded)."""
    if window <= 0 or not 0 <= overlap < window:
        raise ValueError(f"need window > 0 and 0 <= overlap < window, got {window}, {overlap}")
    spans = [(s, e) for s, e in offsets if e > s]
    if len(spans) <= window:
        return [text.strip()] if text.strip() else []
    step = window - overlap
    out = []
    for start in range(0, len(spans), step):
        piece = spans[start : start + window]
        out.append(text[piece[0][0] : piece[-1][1]])
        if start + window >= len(spans):
            break
    return out


def sentence_units(text: str) -> list[str]:
    """``text``'s sentences with ``"\\n"`` between its lines (as MiniCheck's
    ``sent_tokenize_with_newlines``; sentences by :func:`auditor.text.sentences`, not
    NLTK's punkt)."""
    units: list[str] = []
    for line in text.split("\n"):
        units.extend(sentences(line))
        units.append("\n")
    return units[:-1]


def sentence_chunks(
    units: Iterable[str], limit: int, count: Callable[[str], int], joiner: str
) -> list[str]:
    """Group ``units`` greedily into chunks of at most ``limit`` by ``count`` (a unit over
    the limit alone is a chunk of its own), joined by ``joiner``; ``" \\n "`` becomes a
    newline, chunks are stripped and empty ones dropped."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for unit in units:
        n = count(unit)
        if current and size + n > limit:
            chunks.append(joiner.join(current))
            current, size = [], 0
        current.append(unit)
        size += n
    if current:
        chunks.append(joiner.join(current))
    cleaned = [c.replace(" \n ", "\n").strip() for c in chunks]
    return [c for c in cleaned if c]


class CheckpointJudge(LocalJudge):
    """A judge reading a local checkpoint (module docstring). A subclass calls
    :meth:`_resolve` in its constructor and implements :meth:`chunks` (what it reads of
    one evidence passage), :meth:`role_probs` (its reading of (chunk, claim) pairs) and
    :meth:`bands`; :meth:`score_batch` takes the maximum over the chunks of every
    passage. A pair without evidence is an abstention."""

    volatile_params = frozenset({"checkpoint", "revision", "allow_download", "batch_size"})
    _info: CheckpointInfo

    def _resolve(self, checkpoint: str, revision: str | None, allow_download: bool) -> None:
        """Find the checkpoint and make its revision and digests the judge's identity."""
        folder = resolve_checkpoint(
            checkpoint, judge=self.name, allow_download=allow_download, revision=revision
        )
        self._info = checkpoint_info(folder, judge=self.name)
        LocalJudge.__init__(self, **self._info.identity())
        self.checkpoint, self.revision, self.allow_download = checkpoint, revision, allow_download

    def _read_labels(
        self, label_map: Mapping[str, str] | None, defaults: Mapping[str, str] | None = None
    ) -> None:
        """Check ``label_map`` and set the role of each output class (:func:`label_roles`,
        from the checkpoint's ``config.json``)."""
        self.label_map = check_label_map(label_map, judge=self.name)
        self._roles = label_roles(
            self._info.config,
            self.label_map,
            judge=self.name,
            source=f"{self.folder}/config.json",
            defaults=defaults,
        )

    @property
    def folder(self) -> Path:
        """The checkpoint's local folder."""
        return self._info.folder

    def chunks(self, text: str) -> list[str]:
        """The chunks of one evidence passage this judge reads."""
        raise NotImplementedError

    def role_probs(self, chunks: Sequence[str], claims: Sequence[str]) -> np.ndarray:
        """``(n, 3)`` support, contradict and neither probabilities of each (chunk, claim)."""
        raise NotImplementedError

    def bands(self) -> tuple[float, float]:
        """``(support_at, reject_below)`` of :meth:`vote`."""
        raise NotImplementedError

    def score_batch(self, pairs: Sequence[JudgePair]) -> list[Result]:
        reads = [sorted({c for text in pair.evidence for c in self.chunks(text)}) for pair in pairs]
        flat = [(c, pair.claim) for pair, cs in zip(pairs, reads, strict=True) for c in cs]
        probs = (
            self.role_probs([c for c, _ in flat], [h for _, h in flat])
            if flat
            else np.zeros((0, 3))
        )
        results: list[Result] = []
        start = 0
        for chunks in reads:
            if not chunks:
                results.append(no_evidence())
                continue
            best, decisive = max_over_chunks(list(probs[start : start + len(chunks)]))
            start += len(chunks)
            results.append(self.vote(decisive, chunks[best], len(chunks)))
        return results

    def vote(self, probs: np.ndarray, chunk: str, chunks: int) -> Result:
        """The vote and scores from the decisive chunk's role probabilities (:meth:`bands`):
        supported at ``support_at``; not supported below ``reject_below``, or when the
        contradiction reaches ``reject_below`` and exceeds the support; abstain otherwise."""
        support_at, reject_below = self.bands()
        support, contradict, neither = (float(x) for x in probs)
        value = band(support, support_at, reject_below)
        if value == ABSTAIN and contradict >= reject_below and contradict > support:
            value = 1.0
        scores = {"support": support, "neither": neither, CONTRADICTION: contradict}
        raw = json.dumps({"chunks": chunks, "chunk_text": chunk[:300], "support": support})
        return value, scores, raw


@lru_cache(maxsize=4)
def load_checkpoint(folder: str, weights_sha256: str, head: str) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of a checkpoint folder with the standard ``transformers``
    class for ``head`` (``sequence``, ``token`` or ``seq2seq``), offline and without remote
    code; cached per folder and weights digest."""
    import transformers

    classes = {
        "sequence": transformers.AutoModelForSequenceClassification,
        "token": transformers.AutoModelForTokenClassification,
        "seq2seq": transformers.AutoModelForSeq2SeqLM,
    }
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            folder, local_files_only=True, trust_remote_code=False
        )
        model = classes[head].from_pretrained(
            folder, local_files_only=True, trust_remote_code=False
        )
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(
            f"checkpoint {folder}: cannot load ({type(exc).__name__}: {exc})"
        ) from None
    model.eval()
    return model, tokenizer


def forward_probs(
    model: Any, tokenizer: Any, encoded: Sequence[Mapping[str, list[int]]], batch_size: int
) -> list[np.ndarray]:
    """Softmax of a classifier's logits for each tokenised input: one row of class
    probabilities per input (a sequence classifier), or one per token, padding included
    at the end (a token classifier); read in batches of ``batch_size`` padded to their
    longest (right padding: the rows of an input's own tokens come first)."""
    import torch

    rows: list[np.ndarray] = []
    with torch.inference_mode():
        for start in range(0, len(encoded), batch_size):
            part = encoded[start : start + batch_size]
            keys = [k for k in part[0] if k in ("input_ids", "attention_mask", "token_type_ids")]
            batch = tokenizer.pad(
                [{k: e[k] for k in keys} for e in part], padding=True, return_tensors="pt"
            )
            logits = model(**batch).logits.float()
            rows.extend(torch.softmax(logits, dim=-1).numpy().astype(np.float64))
    return rows


def no_evidence() -> Result:
    """The abstention of a pair without evidence."""
    return ABSTAIN, {}, json.dumps({"reason": "no evidence"})
