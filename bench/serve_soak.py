"""`laser serve` soaked in mixed traffic for a long time: does its memory stay flat, and does it
answer every kind of request as it should all along?

One `laser serve` (with an API key, the shipped model, small limits) on 127.0.0.1 and N clients
(asyncio, keep-alive HTTP/1.1) sending, for a bounded time and count, a seeded mix of
* normal requests: POST /v1/embeddings (base64) and /embed with 1-8 sentences of the vendored dev
  corpus, GET /vectorize with one;
* oversized ones: more sentences than --max-inputs, or a sentence over --max-chars (413);
* malformed ones: a body that is not JSON (400), wrong types or an empty string (422);
* unauthorized ones: no key (401);
* abandoned ones: a request of 8 sentences on a connection of its own, closed as soon as it is
  sent (the server drops its sentences not yet embedded: status 499 in /metrics).

The server's resident memory (VmRSS) is sampled every 10 s. Reported: the RSS at the end of the
warm-up and at the end, the growth between them and the largest RSS after the warm-up, the
status counts the clients saw per kind of request, and the server's own counts from /metrics
(requests by endpoint and status, sentences embedded and dropped). Not part of the tests.

    python bench/serve_soak.py [--minutes 30] [--warmup-minutes 5] [--clients 8]
                               [--max-requests 2000000] [--out bench/out/serve_soak.json]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from urllib.parse import quote
from urllib.request import Request, urlopen

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_load import corpus_sentences, cpu_seconds, http, run, start  # noqa: E402

KEY = "soak-key"
LIMITS = {"--max-inputs": 16, "--max-chars": 600, "--max-queued": 512}
SAMPLE_SECONDS = 10
MIX = {"normal": 70, "oversized": 8, "malformed": 8, "unauthorized": 4, "abandoned": 10}


def request(method: str, path: str, body: bytes = b"", key: bool = True) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: soak\r\n"
    if key:
        head += f"Authorization: Bearer {KEY}\r\n"
    if method == "POST":
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return (head + "\r\n").encode() + body


def embed(path: str, field: str, sentences: list, key: bool = True, **extra) -> bytes:
    return request("POST", path, json.dumps({field: sentences, **extra}).encode(), key)


class Traffic:
    """The seeded mix of requests (see the module docstring)."""

    def __init__(self, sentences: list[str], seed: int):
        self.sentences = sentences
        self.rng = random.Random(seed)

    def kind(self) -> str:
        return self.rng.choices(list(MIX), weights=list(MIX.values()))[0]

    def some(self, count: int) -> list[str]:
        return self.rng.sample(self.sentences, count)

    def make(self, kind: str) -> bytes:
        rng = self.rng
        if kind == "normal":
            shape = rng.choice(("openai", "tei", "vectorize"))
            if shape == "vectorize":
                return request("GET", f"/vectorize?q={quote(self.some(1)[0])}&lang=en")
            if shape == "openai":
                return embed("/v1/embeddings", "input", self.some(rng.randint(1, 8)),
                             model="default", encoding_format="base64")
            return embed("/embed", "inputs", self.some(rng.randint(1, 8)))
        if kind == "oversized":
            if rng.random() < 0.5:
                return embed("/embed", "inputs", self.some(LIMITS["--max-inputs"] + 1))
            return embed("/embed", "inputs", ["word " * (LIMITS["--max-chars"] // 5 + 1)])
        if kind == "malformed":
            return rng.choice((request("POST", "/embed", b"{inputs: oops"),
                               embed("/embed", "inputs", [3]), embed("/embed", "inputs", "")))
        if kind == "unauthorized":
            return embed("/embed", "inputs", self.some(2), key=False)
        return embed("/embed", "inputs", self.some(8))  # abandoned


async def client(port: int, traffic: Traffic, state: dict) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    while time.monotonic() < state["deadline"] and state["sent"] < state["max_requests"]:
        kind = traffic.kind()
        message = traffic.make(kind)
        state["sent"] += 1
        if kind == "abandoned":
            _, gone = await asyncio.open_connection("127.0.0.1", port)
            gone.write(message)
            await gone.drain()
            gone.close()
            state["seen"][kind, "closed"] += 1
            continue
        status, _ = await http(reader, writer, message)
        state["seen"][kind, status] += 1
    writer.close()


def rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024


async def sample(pid: int, state: dict) -> None:
    started = time.monotonic()
    while time.monotonic() < state["deadline"] and state["sent"] < state["max_requests"]:
        state["rss"].append((round(time.monotonic() - started), rss_mib(pid)))
        await asyncio.sleep(SAMPLE_SECONDS)
    state["rss"].append((round(time.monotonic() - started), rss_mib(pid)))


async def soak(port: int, pid: int, args, traffic: Traffic) -> dict:
    state = {"deadline": time.monotonic() + 60 * args.minutes, "sent": 0,
             "max_requests": args.max_requests, "seen": Counter(), "rss": []}
    await asyncio.gather(sample(pid, state),
                         *(client(port, traffic, state) for _ in range(args.clients)))
    return state


def server_counts(port: int) -> dict:
    """The server's own counts from /metrics."""
    asked = Request(f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {KEY}"})
    with urlopen(asked, timeout=120) as answer:
        text = answer.read().decode()
    requests = {f"{endpoint} {status}": int(float(n)) for endpoint, status, n in re.findall(
        r'^laser_requests_total\{endpoint="([^"]+)",status="(\d+)"\} (\S+)$', text, re.M)}
    single = {name: float(value) for name, value in re.findall(
        r"^(laser_sentences_total|laser_abandoned_sentences_total|laser_batch_sentences_sum|"
        r"laser_queue_sentences|laser_requests_in_flight) (\S+)$", text, re.M)}
    return {"requests": requests, **single}


def growth(samples: list[tuple[int, float]], warmup_seconds: float) -> dict:
    after = [rss for seconds, rss in samples if seconds >= warmup_seconds]
    if not after:
        return {}
    start_rss, end_rss = after[0], after[-1]
    return {"rss_after_warmup_mib": round(start_rss, 1), "rss_end_mib": round(end_rss, 1),
            "growth_percent": round(100 * (end_rss - start_rss) / start_rss, 2),
            "max_after_warmup_mib": round(max(after), 1),
            "peak_mib": round(max(rss for _, rss in samples), 1)}


def report(result: dict) -> None:
    print(f"{result['minutes']} min, {result['clients']} clients, {result['sent']} requests "
          f"({result['sent'] / (60 * result['minutes']):.0f}/s); server CPU "
          f"{result['server_cpu_seconds']:.0f} s")
    memory = result["memory"]
    print(f"RSS after {result['warmup_minutes']} min of warm-up {memory['rss_after_warmup_mib']} "
          f"MiB, at the end {memory['rss_end_mib']} MiB: growth {memory['growth_percent']}% "
          f"(goal under 5%); largest after warm-up {memory['max_after_warmup_mib']} MiB, peak "
          f"{memory['peak_mib']} MiB")
    print("\n| request kind | status | count (clients' view) |\n|---|---|---:|")
    for (kind, status), count in sorted(result["seen"].items()):
        print(f"| {kind} | {status} | {count:,} |")
    server = result["server"]
    print("\n| endpoint, status (server's /metrics) | count |\n|---|---:|")
    for key, count in sorted(server["requests"].items()):
        print(f"| {key} | {count:,} |")
    print(f"\nsentences embedded {server['laser_batch_sentences_sum']:,.0f}; sentences of "
          f"abandoned requests dropped unembedded {server['laser_abandoned_sentences_total']:,.0f}"
          f"; queue at the end {server['laser_queue_sentences']:.0f}")
    print(f"the server's log: {len(result['server_log'])} lines (2 when all went well: serving "
          "on, stopped)", *result["server_log"], sep="\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--warmup-minutes", type=float, default=5)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--max-requests", type=int, default=2_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(Path(__file__).parent / "out" / "serve_soak.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "serve.log"
        limits = [str(value) for pair in LIMITS.items() for value in pair]
        process, port = start([sys.executable, "-m", "laser", "serve", "--port", "0", "--model",
                               "default", "--api-key", KEY, *limits],
                              Path(scratch) / "no-port-file", log)
        try:
            traffic = Traffic(corpus_sentences(), args.seed)
            state = run(soak(port, process.pid, args, traffic))
            time.sleep(5)  # the last abandoned requests leave the queue
            result = {"minutes": args.minutes, "warmup_minutes": args.warmup_minutes,
                      "clients": args.clients, "sent": state["sent"],
                      "seen": {f"{kind} {status}": n
                               for (kind, status), n in state["seen"].items()},
                      "server": server_counts(port), "rss_samples": state["rss"],
                      "memory": growth(state["rss"], 60 * args.warmup_minutes),
                      "server_cpu_seconds": cpu_seconds(process.pid)}
        finally:
            process.terminate()
            process.wait(timeout=120)
        result["server_log"] = log.read_text().splitlines()[:50]  # "serving on", "stopped"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    result["seen"] = {tuple(key.split(" ", 1)): n for key, n in result["seen"].items()}
    report(result)


if __name__ == "__main__":
    main()
