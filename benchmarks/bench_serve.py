"""One ``engramdb serve``, many clients: ask latency idle and during an ingest job, and what the ingest pays.

    python benchmarks/bench_serve.py [--questions 10] [--threads 4,16] [--per-thread 2] [--out FILE]

Loopback only, bounded, and it stops what it started: one server subprocess on
127.0.0.1 (a free port) over the benchmark home, the local Neo4j started for
the run when none ran (stopped after it), every loop bounded by counts.

The corpus is the MuSiQue dev paragraphs of the first ``--questions`` questions
(all 50 with ``--questions 50``, the whole 1,890-passage corpus with
``--full-corpus``), ingested as a server job:

1. **quiet**: into a fresh namespace with no client asking; its wall time and
   final stats are the reference;
2. **idle asks**: for each thread count, every strategy answers ``threads x
   per-thread`` dev questions over HTTP on the quiet namespace (p50/p95, errors);
3. **asks during ingest**: for each thread count, the same corpus is ingested
   into another fresh namespace while that many threads keep asking, strategy
   after strategy, until the job ends; only asks that started while the job ran
   count. The job's wall time is compared with the quiet one, and its final
   stats must equal the quiet namespace's (``stats_equal``).

Every non-200 answer or transport error counts as an error (expected: 0).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from bench_support import SHARED, bench_settings, local_neo4j, median, percentile

from engramdb.retrieval.strategy import strategy_names

ENGRAMDB = Path(sys.executable).parent / "engramdb"
STARTUP_LINE = re.compile(r"engramdb serving on (http://\S+) ")
STARTUP_SECONDS = 300
JOB_TIMEOUT_SECONDS = 3 * 3600


def corpus_and_questions(count: int, full: bool) -> tuple[list[dict[str, str]], list[str]]:
    questions = json.loads((SHARED / "data" / "musique" / "questions.json").read_text())[:count]
    if full:
        corpus = json.loads((SHARED / "data" / "musique" / "corpus.json").read_text())
    else:
        seen: dict[tuple[str, str], None] = {}
        for item in questions:
            for p in item["paragraphs"]:
                if p["paragraph_text"].strip():
                    seen.setdefault((p["title"], p["paragraph_text"]), None)
        corpus = [{"title": t, "text": x} for t, x in seen]
    return corpus, [item["question"] for item in questions]


class Server:
    """``engramdb serve --port 0`` on the benchmark settings, stopped with SIGTERM by :meth:`stop`."""

    def __init__(self, workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.stderr_path = workdir / "bench-serve.stderr"
        with open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen([str(ENGRAMDB), "serve", "--host", "127.0.0.1", "--port", "0"],
                                            stdout=subprocess.DEVNULL, stderr=err, env=os.environ.copy())  # fmt: skip
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            match = STARTUP_LINE.search(self.stderr_path.read_text(errors="replace"))
            if match:
                self.url = match.group(1)
                break
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"engramdb serve did not start: {self.stderr_path.read_text()}")
            time.sleep(0.2)
        home = Path(os.environ["ENGRAMDB_HOME"])
        self.token = (home / "server" / "token").read_text().strip()

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=600)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(180)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)


def get_json(client: httpx.Client, path: str) -> Any:
    """A GET's JSON, retried on a dropped keep-alive connection (a poll racing the server's idle close)."""
    for attempt in range(3):
        try:
            response = client.get(path)
            response.raise_for_status()
            return response.json()
        except (httpx.ReadError, httpx.RemoteProtocolError):
            if attempt == 2:
                raise
            time.sleep(0.5)
    return None


def submit(client: httpx.Client, namespace: str, corpus: list[dict[str, str]]) -> str:
    response = client.post(f"/v1/namespaces/{namespace}/documents", json={"documents": corpus})
    response.raise_for_status()
    return str(response.json()["job_id"])


def wait(client: httpx.Client, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + JOB_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        job = get_json(client, f"/v1/jobs/{job_id}")
        if job["state"] in ("done", "failed"):
            return job  # type: ignore[no-any-return]
        time.sleep(0.5)
    raise SystemExit(f"job {job_id} did not finish within {JOB_TIMEOUT_SECONDS} s")


def stats(client: httpx.Client, namespace: str) -> dict[str, Any]:
    data = get_json(client, f"/v1/namespaces/{namespace}/stats")
    data.pop("namespace")
    return data  # type: ignore[no-any-return]


class Asker:
    """``threads`` client threads asking one strategy, each its own HTTP connection; latencies in ms."""

    def __init__(self, server: Server, namespace: str, questions: list[str]) -> None:
        self.server, self.namespace, self.questions = server, namespace, questions

    def run(self, strategy: str, threads: int, per_thread: int) -> list[tuple[float, float | None]]:
        """``(started, ms or None for an error)`` of every ask."""
        out: list[tuple[float, float | None]] = []
        lock = threading.Lock()

        def worker(index: int) -> None:
            with self.server.client() as client:
                for k in range(per_thread):
                    question = self.questions[(index * per_thread + k) % len(self.questions)]
                    started = time.monotonic()
                    try:
                        response = client.post(f"/v1/namespaces/{self.namespace}/ask",
                                               json={"question": question, "strategy": strategy})  # fmt: skip
                        ms: float | None = (
                            (time.monotonic() - started) * 1000 if response.status_code == 200 else None
                        )
                    except httpx.HTTPError:
                        ms = None
                    with lock:
                        out.append((started, ms))

        pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        return out


def summary(samples: list[tuple[float, float | None]]) -> dict[str, Any]:
    ok = [ms for _, ms in samples if ms is not None]
    return {"asks": len(samples), "errors": len(samples) - len(ok), "p50_ms": round(median(ok), 1),
            "p95_ms": round(percentile(ok, 95), 1) if ok else None}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=10, help="MuSiQue dev questions (their paragraphs)")
    parser.add_argument("--full-corpus", action="store_true", help="ingest all 1,890 MuSiQue passages")
    parser.add_argument("--threads", default="4,16", help="client thread counts, comma-separated")
    parser.add_argument("--per-thread", type=int, default=2, help="asks per thread per strategy when idle")
    parser.add_argument("--strategies", default=",".join(strategy_names()))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/bench_serve.json"))
    args = parser.parse_args()
    if not (SHARED / "data" / "musique" / "questions.json").exists():
        raise SystemExit(f"needs the MuSiQue data in {SHARED / 'data' / 'musique'} (set ENGRAMDB_SHARED)")
    settings = bench_settings()
    thread_counts = [int(t) for t in args.threads.split(",")]
    strategies = args.strategies.split(",")
    corpus, questions = corpus_and_questions(args.questions, args.full_corpus)
    run = uuid.uuid4().hex[:6]
    result: dict[str, Any] = {"passages": len(corpus), "questions": len(questions), "strategies": strategies,
                              "threads": thread_counts, "server_workers": settings.server_workers}  # fmt: skip
    print(f"{len(corpus)} passages, {len(questions)} questions, strategies {strategies}", flush=True)
    with local_neo4j(settings):
        server = Server(settings.home / "bench-serve")
        try:
            with server.client() as client:
                quiet = f"serve_quiet_{run}"
                job = wait(client, submit(client, quiet, corpus))
                assert job["state"] == "done", job
                result["quiet_ingest_s"] = round(job["finished"] - job["started"], 1)
                reference = stats(client, quiet)
                result["quiet_stats"] = reference
                print(f"quiet ingest: {result['quiet_ingest_s']} s; {reference}", flush=True)
                asker = Asker(server, quiet, questions)
                for strategy in strategies:  # warm every strategy once (models, caches) before timing
                    asker.run(strategy, 1, 1)
                result["idle"] = {}
                for threads in thread_counts:
                    for strategy in strategies:
                        s = summary(asker.run(strategy, threads, args.per_thread))
                        result["idle"][f"{threads}/{strategy}"] = s
                        print(f"idle {threads} threads {strategy}: {s}", flush=True)
                result["during_ingest"], result["loaded_ingest_s"], result["stats_equal"] = {}, {}, {}
                for threads in thread_counts:
                    target = f"serve_load{threads}_{run}"
                    job_id = submit(client, target, corpus)
                    samples: dict[str, list[tuple[float, float | None]]] = {s: [] for s in strategies}
                    rounds = 0
                    while get_json(client, f"/v1/jobs/{job_id}")["state"] in ("queued", "running"):
                        for strategy in strategies:
                            samples[strategy] += asker.run(strategy, threads, 1)
                        rounds += 1
                    job = wait(client, job_id)
                    assert job["state"] == "done", job
                    ended = time.monotonic() - (time.time() - job["finished"])
                    result["loaded_ingest_s"][str(threads)] = round(job["finished"] - job["started"], 1)
                    for strategy in strategies:
                        during = [(t, ms) for t, ms in samples[strategy] if t < ended]
                        s = summary(during)
                        result["during_ingest"][f"{threads}/{strategy}"] = s
                        print(f"during ingest {threads} threads {strategy}: {s}", flush=True)
                    final = stats(client, target)
                    result["stats_equal"][str(threads)] = final == reference
                    if final != reference:
                        result[f"stats_{threads}"] = final
                    print(f"ingest under {threads} threads: {result['loaded_ingest_s'][str(threads)]} s "
                          f"({rounds} rounds); stats equal: {final == reference}", flush=True)  # fmt: skip
        finally:
            server.stop()
    result["errors"] = sum(
        v["errors"] for part in ("idle", "during_ingest") for v in result.get(part, {}).values()
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(json.dumps({k: result[k] for k in ("quiet_ingest_s", "loaded_ingest_s", "stats_equal", "errors")}))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
