"""Milliseconds per ``select`` call of the Python client against a running toolsel serve: a new
connection for every call (``pool_size=0``, what the client did before keep-alive) against
connections reused (the default) and against AsyncToolselClient (reused, one call awaited at a
time), call for call in turns, in one run. Run by bench/python-client.ts, which
starts the service; alone:

    python3 bench/python-client-latency.py --url http://127.0.0.1:8080 [--key KEY] \
        [--rounds 5] [--calls 200]

Prints one row per round (each mode's median over its calls, new clients each round) and the
medians of the rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients" / "python" / "src"))

from toolsel import AsyncToolselClient, ToolselClient  # noqa: E402

INSTRUCTIONS = [
    "What is the weather in Paris tomorrow, and email the forecast to Ann",
    "text Bob that I am late",
    "send an SMS text message",
    "find the best sushi places in Tokyo",
]


def per_call_ms(calls: Dict[str, Callable[[str], object]], count: int) -> Dict[str, float]:
    """Each mode's median milliseconds over ``count`` calls, the modes' calls alternating (after
    one round of calls not counted)."""
    times: Dict[str, List[float]] = {name: [] for name in calls}
    for n in range(-len(INSTRUCTIONS), count):
        instruction = INSTRUCTIONS[n % len(INSTRUCTIONS)]
        order = list(calls) if n % 2 == 0 else list(reversed(calls))
        for name in order:
            start = time.perf_counter()
            calls[name](instruction)
            if n >= 0:
                times[name].append((time.perf_counter() - start) * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--key", default=os.environ.get("TOOLSEL_API_KEY"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    if args.rounds < 1 or args.calls < 1:
        parser.error("--rounds and --calls take positive whole numbers")

    modes: Dict[str, Callable[[], ToolselClient]] = {
        "new connection": lambda: ToolselClient(args.url, api_key=args.key, pool_size=0),
        "reused": lambda: ToolselClient(args.url, api_key=args.key),
    }
    rows: List[Dict[str, float]] = []
    loop = asyncio.new_event_loop()
    for _ in range(args.rounds):
        clients = {name: make() for name, make in modes.items()}
        calls: Dict[str, Callable[[str], object]] = {name: client.select for name, client in clients.items()}
        async_client = AsyncToolselClient(args.url, api_key=args.key)
        calls["async, reused"] = lambda text: loop.run_until_complete(async_client.select(text))
        rows.append(per_call_ms(calls, args.calls))
        for client in clients.values():
            client.close()
        loop.run_until_complete(async_client.close())
    loop.close()

    names = [*modes, "async, reused"]
    print(f"select, ms per call (median of {args.calls} calls), load average {os.getloadavg()[0]:.2f}")
    print("| round | " + " | ".join(names) + " | reused / new |")
    print("|---|" + "---|" * (len(names) + 1))
    for number, row in enumerate(rows, 1):
        cells = " | ".join(f"{row[name]:.3f}" for name in names)
        print(f"| {number} | {cells} | {row['reused'] / row['new connection']:.2f} |")
    medians = {name: statistics.median(row[name] for row in rows) for name in names}
    cells = " | ".join(f"{medians[name]:.3f}" for name in names)
    print(f"| median | {cells} | {medians['reused'] / medians['new connection']:.2f} |")


if __name__ == "__main__":
    main()
