"""Ctrl-C stops a running `eval` promptly (the GIL is released, yet Python's signal
check still runs), what was recorded stays, and a rerun resumes from there."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import sleuth

SCRIPT = """
import sys, sleuth
try:
    sleuth.eval("musique", sys.argv[1], methods="react", model="scripted:" + sys.argv[2],
                out=sys.argv[3], turns=5, rpm=300, cache=False, concurrency=1)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
"""


def test_ctrl_c_stops_eval_and_a_rerun_resumes(musique, tmp_path):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["Thought: look.\nAction: search[county seat]"]))
    out = tmp_path / "run"
    # 300 calls a minute after a burst of 5: 200 questions x 5 turns would take minutes.
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, musique, str(script), str(out)], stdout=subprocess.PIPE, text=True)
    records = Path(out) / "records.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline and (not records.exists() or records.read_text().count("\n") < 2):
        time.sleep(0.1)
    sent = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=30)
    stopped_after = time.perf_counter() - sent
    assert proc.returncode == 3 and "interrupted" in stdout
    assert stopped_after < 5, stopped_after
    kept = len(sleuth.records(out))
    assert 2 <= kept < 200
    # The lock is released: a rerun on the same directory resumes (here: 3 more).
    summary = sleuth.eval("musique", musique, methods="react", model=f"scripted:{script}", out=out,
                          limit=kept + 3, turns=5, cache=False)
    assert (summary.skipped, summary.written) == (kept, 3)
