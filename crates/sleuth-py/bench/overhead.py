"""Per-turn overhead of a Python callable model versus the Rust scripted model.

Both models return the same fixed reply on every turn (a search that never answers),
so both runs play exactly the same episodes: every question runs its whole turn
budget. The difference in wall time per model call is what calling into Python costs
(taking the GIL, building the message list, converting the reply). Run with the
package installed:

    python crates/sleuth-py/bench/overhead.py [--questions 50] [--turns 10] [--concurrency 1]
"""

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import sleuth

REPLY = "Thought: keep looking.\nAction: search[county seat]"


def python_model(messages, **kw):
    return REPLY


def timed(model, qs, args, out):
    start = time.perf_counter()
    summary = sleuth.eval(
        qs, methods=args.method, model=model, out=out, turns=args.turns,
        concurrency=args.concurrency, cache=False, model_name="bench",
    )
    took = time.perf_counter() - start
    return took, summary["calls"]


def main():
    here = Path(__file__).resolve()
    default = here.parents[3].parent / "shared" / "data" / "musique" / "musique_ans_dev_subset200_with_paragraphs.jsonl"
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=os.environ.get("SLEUTH_DATA", str(default)))
    p.add_argument("--questions", type=int, default=50)
    p.add_argument("--turns", type=int, default=10)
    p.add_argument("--method", default="react")
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--repeats", type=int, default=7)
    args = p.parse_args()
    qs = sleuth.load("musique", args.data, limit=args.questions)
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "reply.json"
        script.write_text(json.dumps([REPLY]))
        rust, py = [], []
        calls = None
        for r in range(args.repeats):
            # Alternate the order so neither model always runs on a warmer machine.
            for name, model, into in (("rust", f"scripted:{script}", rust), ("python", python_model, py))[:: 1 if r % 2 == 0 else -1]:
                took, n = timed(model, qs, args, Path(tmp) / f"{name}-{r}")
                calls = n if calls is None else calls
                assert n == calls, "both models must play the same episodes"
                into.append(took / n)
        print(
            f"{len(qs)} questions x {args.turns} turns of {args.method}, concurrency {args.concurrency}: "
            f"{calls} model calls per run, {args.repeats} runs of each model, alternating"
        )
        # The fastest run is the least disturbed by other load on the machine; the
        # median shows how noisy it was.
        for label, pick in (("min", min), ("median", statistics.median)):
            rust_us, py_us = pick(rust) * 1e6, pick(py) * 1e6
            print(
                f"{label:>6}: rust scripted {rust_us:7.1f} us/turn, python callable {py_us:7.1f} us/turn, "
                f"overhead {py_us - rust_us:+7.1f} us/turn, ratio {py_us / rust_us:.2f}x"
            )


if __name__ == "__main__":
    main()
