# The llama.cpp baseline for `sleuth model bench`: llama-cpp-python's low-level
# eval/sample loop on the same GGUF, threads and context as the Rust backend.
# Reads a JSON config on stdin, prints {"prompt_tps": .., "gen_tps": ..} on stdout.
import json
import sys
import time

from llama_cpp import Llama

cfg = json.load(sys.stdin)
llm = Llama(
    model_path=cfg["model"],
    n_ctx=cfg["ctx"],
    n_threads=cfg["threads"],
    n_threads_batch=cfg["threads"],
    n_batch=512,
    n_ubatch=512,
    verbose=False,
)


def tokens(text):
    return llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)


prompt = tokens(cfg["prompt"])
llm.reset()
llm.eval(prompt)  # warm-up: page the weights in
best_prompt = float("inf")
for _ in range(cfg["reps"]):
    llm.reset()
    start = time.perf_counter()
    llm.eval(prompt)
    best_prompt = min(best_prompt, time.perf_counter() - start)

gen_prompt = tokens(cfg["gen_prompt"])
best_gen = float("inf")
for _ in range(cfg["reps"]):
    llm.reset()
    llm.eval(gen_prompt)
    start = time.perf_counter()
    for _ in range(cfg["gen_tokens"] - 1):
        token = llm.sample(temp=0.0)
        llm.eval([token])
    best_gen = min(best_gen, time.perf_counter() - start)

print(json.dumps({
    "prompt_tokens": len(prompt),
    "prompt_tps": len(prompt) / best_prompt,
    "gen_tps": (cfg["gen_tokens"] - 1) / best_gen,
}))
