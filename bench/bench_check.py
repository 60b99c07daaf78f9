"""Benchmark: latency and load of live checks (``auditor.check`` and ``POST /api/check``).

Latency (default): answers of 1, 5 and 20 claims (simple sentences, one number each,
half of them wrong) checked against 5 contexts of about 200 words each, with the
offline panel, on two cores (the process pinned to the first two CPUs where there are
more, torch at 2 threads; the server gets ``OMP_NUM_THREADS=2`` and the same CPUs):

- through the Python API: a warm :class:`auditor.Checker`, ``--samples`` checks per size
  (each a new answer: no vector is cached from the one before), wall time of the call;
- through HTTP on loopback: ``auditor serve`` started as a user starts it
  (``--warm-checks``), one client, the whole request (JSON both ways).

Reported: p50 and p95 in milliseconds per size and path, the claims found per answer,
and for the Python API the median CPU time of a check (all threads): on a machine
shared with other work the wall times grow with the load (printed), the CPU time much
less; with two free cores a check takes between half its CPU time and its CPU time.
Aim: p95 <= 300 ms for 5 claims.

Load (``--load``): ``--clients`` concurrent HTTP clients (default 20) each sending
5-claim checks back to back for ``--seconds`` (default 60) against one server. The
server runs one check at a time and lets up to 32 more wait; a request beyond that
gets 503 with ``Retry-After`` (counted as refused, not as an error). Reported: checks
answered, refused, errors (any other failure), throughput, latency p50/p95 as the
clients see it (waiting included), and the server's resident memory at the start, the
middle and the end (it should stay flat).

Usage::

    python bench/bench_check.py [--samples 20] [--sizes 1,5,20] [--no-http] [--threads 2]
    python bench/bench_check.py --load [--clients 20] [--seconds 60] [--threads 2]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORES = 2
PER_CONTEXT = 18
NAMES = tuple(
    f"{head}{tail}"
    for head in ("Ald", "Bish", "Cott", "Dun", "Els", "Fen", "Gar", "Hol", "Ils", "Jar")
    for tail in ("ton", "by", "ley", "wick", "ford", "ham", "stow", "field", "mouth")
)


def pin_two_cores() -> list[int]:
    """Pin this process (and its children) to the first two CPUs it may run on."""
    cpus = sorted(os.sched_getaffinity(0))[:CORES]
    os.sched_setaffinity(0, cpus)
    return cpus


def corpus(seed: int = 0) -> tuple[list[str], list[tuple[str, int]]]:
    """5 contexts of about 200 words (18 station facts each) and the facts they state."""
    rng = random.Random(seed)
    facts = [(name, rng.randint(2, 14)) for name in NAMES[: 5 * PER_CONTEXT]]
    contexts = []
    for i in range(5):
        chunk = facts[i * PER_CONTEXT : (i + 1) * PER_CONTEXT]
        sentences = [
            f"{name} station has {n} platforms and opened to passengers in {1900 + 7 * n}."
            for name, n in chunk
        ]
        contexts.append(" ".join(sentences))
    return contexts, facts


def answer_of(facts: list[tuple[str, int]], n_claims: int, seed: int) -> str:
    """An answer of ``n_claims`` one-fact sentences, every other number wrong."""
    rng = random.Random(seed)
    chosen = rng.sample(facts, n_claims)
    return " ".join(
        f"{name} station has {n if i % 2 == 0 else n + 1} platforms."
        for i, (name, n) in enumerate(chosen)
    )


def percentiles(values: list[float]) -> dict[str, float]:
    """p50 and p95 in milliseconds."""
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 1), "p95_ms": round(p95 * 1000, 1)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def served(work: Path, threads: int) -> Iterator[tuple[int, int]]:
    """``auditor serve --warm-checks`` on a fresh ledger; (port, server pid)."""
    from ledger import open_ledger

    db = work / "ledger.db"
    open_ledger(db).close()
    port = free_port()
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    log = (work / "serve.log").open("w")
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "auditor", "serve", "--db", str(db), "--port", str(port)),
            "--warm-checks",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
        env=env,
    )
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"auditor serve exited: {(work / 'serve.log').read_text()}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", "/api/runs")
                conn.getresponse().read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("auditor serve did not start within 300 s") from None
                time.sleep(0.5)
        yield port, proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=120)
        log.close()


def post(conn: http.client.HTTPConnection, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    conn.request(
        "POST", "/api/check", body=json.dumps(body), headers={"Content-Type": "application/json"}
    )
    res = conn.getresponse()
    return res.status, json.loads(res.read())


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def latency(sizes: list[int], samples: int, http_too: bool, threads: int) -> dict[str, Any]:
    import torch

    from auditor import Checker

    torch.set_num_threads(threads)
    contexts, facts = corpus()
    out: dict[str, Any] = {"contexts": 5, "context_words": [len(c.split()) for c in contexts]}
    with Checker() as checker:
        checker.warm()
        checker.check(answer_of(facts, 5, -1), contexts)  # every context's vectors cached
        for n in sizes:
            times, cpu, claims = [], [], []
            for i in range(samples):
                text = answer_of(facts, n, 1000 * n + i)
                started, cpu_started = time.perf_counter(), time.process_time()
                result = checker.check(text, contexts)
                times.append(time.perf_counter() - started)
                cpu.append(time.process_time() - cpu_started)
                claims.append(len(result.claims))
            out[f"python_{n}"] = {
                **percentiles(times),
                "cpu_p50_ms": round(statistics.median(cpu) * 1000, 1),
                "claims": statistics.mean(claims),
            }
    if http_too:
        with tempfile.TemporaryDirectory() as tmp, served(Path(tmp), threads) as (port, _pid):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
            post(conn, {"answer": answer_of(facts, 5, -1), "contexts": contexts})
            for n in sizes:
                times, claims = [], []
                for i in range(samples):
                    body = {"answer": answer_of(facts, n, 2000 * n + i), "contexts": contexts}
                    started = time.perf_counter()
                    status, result = post(conn, body)
                    times.append(time.perf_counter() - started)
                    assert status == 200, result
                    claims.append(len(result["claims"]))
                out[f"http_{n}"] = {**percentiles(times), "claims": statistics.mean(claims)}
    return out


def load(clients: int, seconds: float, threads: int) -> dict[str, Any]:
    contexts, facts = corpus()
    counts = {"ok": 0, "refused": 0, "errors": 0}
    times: list[float] = []
    lock = threading.Lock()
    memory: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, served(Path(tmp), threads) as (port, pid):
        memory["start"] = rss_mb(pid)
        stop = time.monotonic() + seconds

        def client(k: int) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
            i = 0
            while time.monotonic() < stop:
                body = {"answer": answer_of(facts, 5, 10_000 * k + i), "contexts": contexts}
                i += 1
                started = time.perf_counter()
                try:
                    status, _ = post(conn, body)
                except (OSError, http.client.HTTPException, ValueError):
                    status = -1
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
                with lock:
                    if status == 200:
                        counts["ok"] += 1
                        times.append(time.perf_counter() - started)
                    elif status == 503:
                        counts["refused"] += 1
                    else:
                        counts["errors"] += 1
                if status == 503:
                    time.sleep(1.0)  # Retry-After

        threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
        began = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(seconds / 2)
        memory["middle"] = rss_mb(pid)
        for t in threads:
            t.join()
        elapsed = time.monotonic() - began
        memory["end"] = rss_mb(pid)
    return {
        "clients": clients,
        "seconds": round(elapsed, 1),
        **counts,
        "throughput_per_s": round(counts["ok"] / elapsed, 2),
        **(percentiles(times) if times else {}),
        "rss_mb": memory,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20, help="checks per answer size")
    parser.add_argument("--sizes", default="1,5,20", help="claims per answer, comma-separated")
    parser.add_argument("--no-http", action="store_true", help="the Python API only")
    parser.add_argument("--load", action="store_true", help="the load test instead")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    args = parser.parse_args(argv)
    cpus = pin_two_cores()
    if args.load:
        report = load(args.clients, args.seconds, args.threads)
    else:
        sizes = [int(x) for x in args.sizes.split(",")]
        report = latency(sizes, args.samples, not args.no_http, args.threads)
    head = {"cpus": cpus, "torch_threads": args.threads, "load_average": os.getloadavg()}
    print(json.dumps({**head, **report}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
