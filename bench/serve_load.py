"""`laser serve` under load, side by side in one run with a baseline server built like the
official LASER app and with `laser embed` on the same sentences.

N clients (asyncio, keep-alive HTTP/1.1 on 127.0.0.1, one connection each) send requests for a
bounded time and count; every client request holds 1-8 English sentences of the vendored dev
corpus (tests/data/corpus/dev/fra-eng.tsv.gz), drawn with a fixed seed. Rows:

* `laser embed`        — `laser embed`'s code path (`embed_file`) over the sentences the
                         `/v1/embeddings` row sent, in one file, warmed up (its steady rate, as
                         the servers are measured warm): the throughput to approach;
* `laser embed command` — the same file through the `laser embed` command as a user runs it:
                         its wall time includes starting Python and loading the model (shown,
                         not the figure the goal compares with);
* `serve /v1/embeddings` — `laser serve`, each client request one POST (OpenAI body, base64
                         rows, as the `openai` client asks for them);
* `serve /embed`       — the same with JSON float rows (text-embeddings-inference's body);
* `serve /vectorize`   — `laser serve` asked the official app's way: one GET per sentence;
* `serve /v1/embeddings (1 client)` — a lone client: the latency of a request on an idle server;
* `baseline /vectorize` — the official app built as it is (`docker/app.py`: a threaded server,
                         one `encode` per request of one sentence, the network run in torch),
                         here on `http.server`, same model, loaded once (its other per-request
                         work, loading the model and passing the text through temporary files,
                         is left out): the baseline of the goal;
* `baseline on laser's encoder /vectorize` — the same server running the network on laser
                         serve's encoder (ONNX Runtime): what the batching alone accounts for.

The rows the goals compare (serve /v1/embeddings, laser embed, the two baselines) are measured in
rounds, one right after the other while the other servers idle, so that on a machine shared with
other work all of them meet about the same load; every round is reported, with the medians of
its ratios.

Reports requests/s, sentences/s, p50/p95/p99 latency of a client request, the CPU time the server
process spent per 1,000 sentences (all its threads; for `laser embed`, the bench process's) and
the server's peak RSS (VmHWM); then, for `/v1/embeddings`, the CPU time of laser serve's event
loop and the sentences its batches held on average (its /metrics). The clients share the CPU
with the server: on a small machine they cost it some. Sentences per CPU second compare the
servers even on a machine shared with other work, where sentences/s depend on what else runs.

    python bench/serve_load.py [--clients 64] [--seconds 12] [--rounds 3]
                               [--max-requests 20000]
"""
from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional
from urllib.parse import quote
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 120  # seconds a row may run past its time before the run fails
CORPUS = ROOT / "tests" / "data" / "corpus" / "dev" / "fra-eng.tsv.gz"


def corpus_sentences() -> list[str]:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t")[1] for line in f]


@dataclass
class Result:
    name: str
    requests: int
    sentences: int
    seconds: float
    latencies: list
    peak_rss_mib: float | None = None
    cpu_seconds: float = 0.0  # CPU time the server (or `laser embed`) spent on the row
    event_loop_seconds: float = 0.0  # of which laser serve's main thread (the event loop)
    batch_sentences: float = 0.0  # laser serve's batches in the row: sentences per batch

    def latency_ms(self, q: float) -> str:
        """The q-quantile of the client requests' latency, in ms."""
        if not self.latencies:
            return "—"
        ordered = sorted(self.latencies)
        return f"{1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.0f}"

    def row(self) -> str:
        percentile = self.latency_ms
        rss = f"{self.peak_rss_mib:.0f}" if self.peak_rss_mib else "—"
        cpu = 1000 * self.cpu_seconds / self.sentences
        rate = self.requests / self.seconds if self.latencies else None
        return (f"| {self.name} | {f'{rate:,.0f}' if rate else '—'} | "
                f"{self.sentences / self.seconds:,.0f} | {percentile(0.5)} | {percentile(0.95)} | "
                f"{percentile(0.99)} | {cpu:.2f} | {rss} |")


# --- the clients -------------------------------------------------------------------------------

CONTENT_LENGTH = re.compile(rb"(?i)content-length: *(\d+)")


async def http(reader, writer, request: bytes) -> tuple[int, bytes]:
    """One request on a keep-alive connection: (status, body)."""
    writer.write(request)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = int(CONTENT_LENGTH.search(head).group(1))
    return status, await reader.readexactly(length)


def post(path: str, body: dict) -> list[bytes]:
    data = json.dumps(body).encode()
    return [f"POST {path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n".encode() + data]


def gets(sentences: list[str]) -> list[bytes]:
    return [f"GET /vectorize?q={quote(s)}&lang=en HTTP/1.1\r\nHost: bench\r\n\r\n".encode()
            for s in sentences]


REQUESTS = {
    "/v1/embeddings": lambda s: post("/v1/embeddings", {"model": "default", "input": s,
                                                        "encoding_format": "base64"}),
    "/embed": lambda s: post("/embed", {"inputs": s, "normalize": False}),
    "/vectorize": gets,
}


async def load(port: int, kind: str, batches: list[list[str]], clients: int,
               seconds: float) -> tuple[int, int, float, list]:
    """Clients take the next batch until all are sent or `seconds` have passed."""
    latencies, done, sentences = [], [0], [0]
    position = iter(range(len(batches)))
    started = time.perf_counter()
    deadline = started + seconds

    async def client() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for i in position:
            if time.perf_counter() > deadline:
                break
            begin = time.perf_counter()
            for request in REQUESTS[kind](batches[i]):
                status, _ = await http(reader, writer, request)
                if status != 200:
                    raise RuntimeError(f"{kind}: HTTP {status}")
                done[0] += 1
            latencies.append(time.perf_counter() - begin)
            sentences[0] += len(batches[i])
        writer.close()

    # one timeout for the whole row rather than one per request, which would cost the clients
    # a timer each time on the CPUs the server runs on
    async with asyncio.timeout(seconds + TIMEOUT):
        await asyncio.gather(*(client() for _ in range(clients)))
    return done[0], sentences[0], time.perf_counter() - started, latencies


# --- the servers -------------------------------------------------------------------------------

def baseline_server(port_file: str, runtime: str) -> None:
    """The official app's design on http.server: a thread per request, one encode each."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs, urlparse

    from laser import Encoder
    encoder = Encoder.load("default", runtime=runtime)

    class Vectorize(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            query = parse_qs(urlparse(self.path).query)
            content = query["q"][0]
            embedding = encoder.encode([content], query.get("lang", ["en"])[0])
            body = json.dumps({"content": content, "embedding": embedding.tolist()}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    class Server(ThreadingHTTPServer):
        request_queue_size = 128  # werkzeug's listen backlog, under the official Flask app

    httpd = Server(("127.0.0.1", 0), Vectorize)
    Path(port_file).write_text(str(httpd.server_address[1]))
    httpd.serve_forever()


def start(command: list[str], port_file: Path, log: Path,
          environment: Optional[dict[str, str]] = None) -> tuple[subprocess.Popen, int]:
    """A server subprocess (with `environment` added to ours) and its port, once it answers."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(environment or {})}
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=open(log, "wb"), env=env)
    for _ in range(1200):
        text = port_file.read_text() if port_file.exists() else log.read_text()
        found = re.search(r"(?:serving on http://127\.0\.0\.1:)?(\d+)\s*$", text)
        if found and (port_file.exists() or "serving on" in text):
            return process, int(found.group(1))
        if process.poll() is not None:
            raise RuntimeError(log.read_text())
        time.sleep(0.1)
    raise RuntimeError(f"server did not start: {log.read_text()}")


def cpu_seconds(pid: int, thread: Optional[int] = None) -> float:
    """User and system time of a process, all its threads (ended ones too), or of one thread."""
    stat = Path(f"/proc/{pid}/task/{thread}/stat" if thread else f"/proc/{pid}/stat")
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def batch_totals(port: int) -> tuple[float, float]:
    """laser serve's batches so far, from /metrics: (sentences, batches)."""
    with urlopen(f"http://127.0.0.1:{port}/metrics", timeout=TIMEOUT) as answer:
        text = answer.read().decode()
    found = dict(re.findall(r"^laser_batch_sentences_(sum|count) (\S+)$", text, re.M))
    return float(found.get("sum", 0)), float(found.get("count", 0))


def peak_rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024


def run(coroutine):
    """The clients' event loop: uvloop when installed (the serve extra has it), for every row."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)


@dataclass
class Served:
    """A server subprocess answering on a port."""

    name: str
    process: subprocess.Popen
    port: int


@contextmanager
def running(name: str, command: list[str], port_file: Path, log: Path, kind: str,
            batches: list[list[str]], clients: int) -> Iterator[Served]:
    """A server, started and warmed up with one request per client on endpoint `kind`, until
    the block ends."""
    process, port = start(command, port_file, log)
    try:
        run(load(port, kind, batches[:clients], clients, 30))
        yield Served(name, process, port)
    finally:
        process.terminate()
        process.wait(timeout=60)


def measure(server: Served, kind: str, clients: int, batches: list[list[str]],
            seconds: float, metrics: bool = False) -> Result:
    """One row: `clients` clients on one endpoint for `seconds`; with `metrics`, the sentences
    per batch that laser serve's /metrics counted."""
    pid = server.process.pid
    cpu, loop = cpu_seconds(pid), cpu_seconds(pid, pid)
    batched = batch_totals(server.port) if metrics else (0.0, 0.0)
    requests, sentences, elapsed, latencies = run(load(server.port, kind, batches, clients,
                                                       seconds))
    label = f"{server.name} {kind}" + (" (1 client)" if clients == 1 else "")
    result = Result(label, requests, sentences, elapsed, latencies, peak_rss_mib(pid),
                    cpu_seconds(pid) - cpu, cpu_seconds(pid, pid) - loop)
    if metrics:
        total, count = (after - before for after, before in zip(batch_totals(server.port),
                                                                batched))
        result.batch_sentences = total / max(count, 1)
    return result


class WarmEmbed:
    """`laser embed`'s code path (`embed_file`) with the model loaded and warmed up once: its
    steady rate, as the servers are measured once they are up and warm."""

    def __init__(self, sentences: list[str], tmp: Path):
        from laser import Encoder
        self.encoder = Encoder.load("default")
        self.tmp = tmp
        self.measure(sentences)

    def measure(self, sentences: list[str]) -> Result:
        """`embed_file` over `sentences`, in one file."""
        from laser.pipeline import EmbedOptions, embed_file
        source = self.tmp / "sentences.txt"
        source.write_text("".join(s + "\n" for s in sentences), encoding="utf-8")
        cpu = time.process_time()
        report = embed_file(self.encoder, str(source), str(self.tmp / "out.npy"),
                            EmbedOptions("en", provenance=False))
        return Result("laser embed (same sentences, one file)", 0, report.rows, report.seconds,
                      [], cpu_seconds=time.process_time() - cpu)


def measure_embed_command(source: Path, tmp: Path, rows: int) -> Result:
    """The `laser embed` command as a user runs it on the same file: its wall time includes
    starting Python and loading the model."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "laser", "embed", str(source), "-o", str(tmp / "cli.npy"),
               "--lang", "en", "--model", "default", "-q"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return Result("laser embed command (same file, with its start-up)", 0, rows, seconds, [],
                  cpu_seconds=cpu)


@dataclass
class Round:
    """The rows the goals compare, measured one right after the other."""

    served: Result  # laser serve /v1/embeddings, many clients
    embedded: Result  # laser embed on the sentences that row sent
    baseline: Result  # the official app's design and runtime (torch) /vectorize, many clients
    same_encoder: Result  # the same design on laser serve's encoder /vectorize, many clients

    @property
    def versus_embed(self) -> float:
        return rate(self.served) / rate(self.embedded)

    @property
    def versus_baseline(self) -> float:
        return rate(self.served) / rate(self.baseline)

    @property
    def versus_same_encoder(self) -> float:
        return rate(self.served) / rate(self.same_encoder)


def measure_rounds(serve: Served, baselines: tuple[Served, Served], batches: list[list[str]],
                   clients: int, seconds: float, rounds: int, tmp: Path) -> list[Round]:
    """The goals' rows in turn, `rounds` times: laser serve, then `laser embed` on the sentences
    it sent, then the baseline and the baseline on laser's encoder, each while the others idle,
    so that on a shared machine all of them meet about the same other load."""
    measured, warm = [], None
    for _ in range(rounds):
        served = measure(serve, "/v1/embeddings", clients, batches, seconds, metrics=True)
        used = [s for batch in batches for s in batch][:max(served.sentences, 1000)]
        warm = warm or WarmEmbed(used, tmp)
        embedded = warm.measure(used)
        measured.append(Round(served, embedded, *(
            measure(baseline, "/vectorize", clients, batches, seconds) for baseline in baselines)))
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=12, help="per measured row")
    parser.add_argument("--rounds", type=int, default=3, help="of the rows the goals compare")
    parser.add_argument("--max-requests", type=int, default=20000, help="client requests per row")
    parser.add_argument("--baseline-server", metavar="PORT_FILE", help=argparse.SUPPRESS)
    parser.add_argument("--baseline-runtime", default="auto", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.baseline_server:
        baseline_server(args.baseline_server, args.baseline_runtime)
        return
    pool = corpus_sentences()
    rng = random.Random(1)
    batches = [rng.sample(pool, rng.randint(1, 8)) for _ in range(args.max_requests)]
    many = args.clients
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as servers:
        tmp = Path(tmp)
        serve = servers.enter_context(running(
            "laser serve", [sys.executable, "-m", "laser", "serve", "--port", "0", "--model",
                            "default", "--max-connections", str(4 * many + 16)],
            tmp / "none", tmp / "serve.log", "/v1/embeddings", batches, many))
        baselines = tuple(servers.enter_context(running(
            name, [sys.executable, __file__, "--baseline-server", str(tmp / f"{runtime}.port"),
                   "--baseline-runtime", runtime],
            tmp / f"{runtime}.port", tmp / f"{runtime}.log", "/vectorize", batches, many))
            for name, runtime in (("baseline", "torch"), ("baseline on laser's encoder", "auto")))
        rounds = measure_rounds(serve, baselines, batches, many, args.seconds, args.rounds, tmp)
        others = [measure(serve, kind, clients, batches, args.seconds)
                  for kind, clients in (("/embed", many), ("/vectorize", many),
                                        ("/v1/embeddings", 1))]
        command = measure_embed_command(tmp / "sentences.txt", tmp, rounds[-1].embedded.sentences)
    report(args, rounds, others, command)


def report(args: argparse.Namespace, rounds: list[Round], others: list[Result],
           command: Result) -> None:
    """The median round's rows with the others, then every round against the goals."""
    middle = sorted(rounds, key=lambda r: r.versus_embed)[len(rounds) // 2]
    print(f"{args.clients} clients, 1-8 sentences per client request, {args.seconds:g} s per "
          f"row, {os.cpu_count()} CPUs; the round with the median share of laser embed's rate:")
    print("| server, endpoint | requests/s | sentences/s | p50 ms | p95 ms | p99 ms | "
          "CPU s / 1k sentences | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for result in [middle.served, *others, middle.baseline, middle.same_encoder, middle.embedded,
                   command]:
        print(result.row())
    print(f"\n/v1/embeddings against the goals, round by round ({args.clients} clients):")
    print("| round | laser serve sentences/s | p99 ms | laser embed sentences/s | vs laser embed "
          "| per CPU second vs laser embed | vs baseline | vs baseline on laser's encoder |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for number, r in enumerate(rounds, 1):
        print(f"| {number} | {rate(r.served):,.0f} | {r.served.latency_ms(0.99)} | "
              f"{rate(r.embedded):,.0f} | {100 * r.versus_embed:.0f}% | "
              f"{100 * efficiency(r.served) / efficiency(r.embedded):.0f}% | "
              f"{r.versus_baseline:.1f}x | {r.versus_same_encoder:.1f}x |")
    print(f"\nmedian of {len(rounds)} rounds: "
          f"{100 * statistics.median(r.versus_embed for r in rounds):.0f}% of laser embed's "
          f"sentences/s (goal: 80%), {statistics.median(r.versus_baseline for r in rounds):.1f}x "
          f"the baseline's (goal: 5x), "
          f"{statistics.median(r.versus_same_encoder for r in rounds):.1f}x the baseline's on "
          f"laser's encoder; {100 * rate(middle.served) / rate(command):.0f}% of the laser embed "
          "command's sentences/s with its start-up (median round)")
    served = middle.served
    print(f"laser serve's event loop (its main thread) spent "
          f"{1000 * served.event_loop_seconds / served.sentences:.2f} CPU s per 1,000 sentences; "
          f"its batches held {served.batch_sentences:.1f} sentences on average (median round)")


def rate(result: Result) -> float:
    return result.sentences / result.seconds


def efficiency(result: Result) -> float:
    """Sentences per CPU second: what the row would reach with the cores to itself."""
    return result.sentences / result.cpu_seconds


if __name__ == "__main__":
    main()
