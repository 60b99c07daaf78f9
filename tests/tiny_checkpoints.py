"""Tiny random-weight checkpoints of each architecture the checkpoint judges read, built
locally with ``transformers`` configs and a word-level tokenizer (no download): shared by
the checkpoint judges' tests and the judge conformance suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace
from tokenizers.processors import TemplateProcessing
from tokenizers.trainers import WordLevelTrainer
from transformers import (
    DebertaV2Config,
    DebertaV2ForSequenceClassification,
    ModernBertConfig,
    ModernBertForTokenClassification,
    PreTrainedTokenizerFast,
    RobertaConfig,
    RobertaForSequenceClassification,
    T5Config,
    T5ForTokenClassification,
)

from auditor.judges.hhem import HHEM_PROMPT

torch.manual_seed(0)
CORPUS = [
    "The bridge opened in 1932 and cost 3200 dollars .",
    "Paris is the capital of France and it is big .",
    "Marta Sousa coaches Harrow Vale Rovers since 2019 .",
    "predict : premise hypothesis passage question output summarize text",
    "Determine if the hypothesis is true given the premise ?",
    "Choose your answer : based on the paragraph above can we conclude that",
    "OPTIONS - Yes No I think answer is a b c d e f g h",
]
CLAIM = "The bridge opened in 1932 ."
EVIDENCE = "The bridge opened in 1932 and cost 3200 dollars ."


def tokenizer(folder: Path, specials: list[str], single: str, pair: str, **kw: str) -> Any:
    tok = Tokenizer(WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = Whitespace()
    tok.train_from_iterator(CORPUS, WordLevelTrainer(special_tokens=specials))
    used = [t for t in specials if t in single + pair]
    tok.post_processor = TemplateProcessing(
        single=single, pair=pair, special_tokens=[(t, tok.token_to_id(t)) for t in used]
    )
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", **kw)
    fast.save_pretrained(folder)
    return fast


def bert_tokenizer(folder: Path) -> Any:
    return tokenizer(
        folder,
        ["<pad>", "<s>", "</s>", "<unk>", "<mask>"],
        "<s> $A </s>",
        "<s> $A </s> </s> $B </s>",
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        cls_token="<s>",
        sep_token="</s>",
    )


def t5_tokenizer(folder: Path) -> Any:
    return tokenizer(
        folder,
        ["<pad>", "</s>", "<unk>"],
        "$A </s>",
        "$A </s> $B </s>",
        pad_token="<pad>",
        eos_token="</s>",
    )


def roberta(folder: Path, id2label: dict[int, str], bias: list[float] | None = None) -> Path:
    bert_tokenizer(folder)
    config = RobertaConfig(
        vocab_size=128,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=160,
        pad_token_id=0,
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )
    model = RobertaForSequenceClassification(config)
    if bias is not None:  # constant logits: the head reads nothing of the input
        with torch.no_grad():
            model.classifier.out_proj.weight.zero_()
            model.classifier.out_proj.bias.copy_(torch.tensor(bias))
    model.save_pretrained(folder)
    return folder


def deberta(folder: Path) -> Path:
    bert_tokenizer(folder)
    config = DebertaV2Config(
        vocab_size=128,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=256,
        pad_token_id=0,
        num_labels=2,
    )
    DebertaV2ForSequenceClassification(config).save_pretrained(folder)
    return folder


def t5_config(**kw: Any) -> T5Config:
    return T5Config(
        vocab_size=256,
        d_model=16,
        d_ff=32,
        d_kv=8,
        num_layers=1,
        num_heads=2,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
        **kw,
    )


def lettuce(folder: Path, bias: list[float]) -> Path:
    bert_tokenizer(folder)
    config = ModernBertConfig(
        vocab_size=128,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        max_position_embeddings=512,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        cls_token_id=1,
        sep_token_id=2,
        num_labels=2,
    )
    model = ModernBertForTokenClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor(bias))
    model.save_pretrained(folder)
    return folder


def hhem(folder: Path, bias: list[float]) -> Path:
    """An HHEM-2.1-open layout: T5 token-classification weights under a ``t5.`` prefix
    (the tied input embedding left out, as published) and its own config fields."""
    t5_tokenizer(folder)
    config = t5_config(num_labels=2)
    model = T5ForTokenClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor(bias))
    state = {f"t5.{k}": v.contiguous() for k, v in model.state_dict().items()}
    state.pop("t5.transformer.encoder.embed_tokens.weight")
    save_file(state, str(folder / "model.safetensors"))
    fields = {**config.to_dict(), "model_type": "HHEMv2", "prompt": HHEM_PROMPT}
    fields |= {"architectures": ["HHEMv2ForSequenceClassification"], "auto_map": {"x": "y"}}
    (folder / "config.json").write_text(json.dumps(fields))
    return folder


def checkpoint_for(judge: str, root: Path) -> Path:
    """A tiny checkpoint the registered checkpoint judge ``judge`` reads, under ``root``."""
    folder = root / judge
    if folder.exists():
        return folder
    if judge in ("hf_classifier", "minicheck"):
        return roberta(folder, {0: "entailment", 1: "neutral", 2: "contradiction"})
    if judge == "factcg":
        return deberta(folder)
    if judge == "hhem":
        return hhem(folder, bias=[0.0, 1.0])
    if judge == "lettucedetect":
        return lettuce(folder, bias=[0.5, 0.0])
    raise KeyError(judge)


CHECKPOINT_JUDGES = ("hf_classifier", "minicheck", "factcg", "hhem", "lettucedetect")
"""The registered judges that read a checkpoint (the conformance suite gives each one)."""
