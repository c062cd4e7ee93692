"""Python models for the tests: a small reader that answers the MuSiQue question
"What is the seat of the county where Van Hook Township is located?" from what the
environment shows it (it never sees the gold answer), in the ReAct or the SLEUTH
notation, and a model that only ever searches (every episode runs to its budget)."""

import re

MEMORY_EMPTY = "Confirmed Facts:\n- none\nActive Hypotheses:\n- none\nOpen Questions:\n- none\n"


def last_user(messages):
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


class CountySeatReader:
    """Turn 1 searches the township, turn 2 the county's courthouse, turn 3 answers
    with the town the courthouse paragraph names. ``notation`` is "react" or
    "sleuth"; every call's keyword arguments are kept in ``calls``."""

    def __init__(self, notation="react"):
        self.notation = notation
        self.calls = []

    def complete(self, messages, **kw):
        self.calls.append(kw)
        assert all(set(m) == {"role", "content"} for m in messages)
        seen = "\n".join(m["content"] for m in messages if m["role"] == "user")
        county = re.search(r"township in (\w+ County)", seen)
        town = re.search(r"Courthouse in (\w+), North Dakota", seen)
        if town:
            return self.say(
                f"The courthouse of {county.group(1)} is in {town.group(1)}.",
                [("F1", f"Van Hook Township is in {county.group(1)}", "Van Hook Township, Mountrail County, North Dakota"),
                 ("F2", f"{county.group(1)}'s courthouse is in {town.group(1)}", f"{county.group(1)} Courthouse")],
                f"finish[{town.group(1)}]",
            )
        if county:
            return self.say(
                f"Van Hook Township is in {county.group(1)}; now its seat.",
                [("F1", f"Van Hook Township is in {county.group(1)}", "Van Hook Township, Mountrail County, North Dakota")],
                f"search[{county.group(1)} Courthouse]",
            )
        return self.say("First find the township's county.", [], "search[Van Hook Township]")

    def say(self, thought, facts, action):
        if self.notation == "react":
            return f"Thought: {thought}\nAction: {action}"
        lines = ["Confirmed Facts:"]
        lines += [f"- [{n}] {s} (source: {t})" for n, s, t in facts] or ["- none"]
        lines += ["Active Hypotheses:", "- none", "Open Questions:"]
        lines += ["- [Q1] Which town is the county seat? | action: county seat | priority: high"]
        return "\n".join(lines) + f"\nAction: {action}"


def searcher(messages, **kw):
    """Never answers: every episode uses its whole turn budget."""
    return "Thought: keep looking.\nAction: search[county seat]"
