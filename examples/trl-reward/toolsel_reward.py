"""Planner and selector rewards for TRL's GRPOTrainer, computed by a running `toolsel serve` (standard library only).

Dataset rows come from `toolsel train-data grpo`: grpo-planner.*.jsonl (columns prompt, instruction,
gold, library) and grpo-selector.*.jsonl (prompt, gold, candidates); TRL passes the columns to the
reward function as keyword arguments.
"""
import json
import os
import urllib.request

TOOLSEL_URL = os.environ.get("TOOLSEL_URL", "http://127.0.0.1:8080")
TOOLSEL_KEY = os.environ.get("TOOLSEL_API_KEY")  # a read key, when the server requires keys


def _post(path, body):
    headers = {"content-type": "application/json"}
    if TOOLSEL_KEY:
        headers["authorization"] = "Bearer " + TOOLSEL_KEY
    request = urllib.request.Request(TOOLSEL_URL + path, json.dumps(body).encode(), headers)
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)["rewards"]


def toolsel_planner_reward(prompts, completions, instruction, gold, library, **kwargs):
    """One reward per completion; the completions of one prompt are scored in one request."""
    texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
    groups = {}
    for index, key in enumerate(zip(library, instruction, map(tuple, gold))):
        groups.setdefault(key, []).append(index)
    rewards = [0.0] * len(texts)
    for (name, text, ids), indexes in groups.items():
        body = {"library": name, "instruction": text, "gold": list(ids),
                "completions": [texts[i] for i in indexes]}
        for i, scored in zip(indexes, _post("/v1/rewards/planner", body)):
            rewards[i] = scored["reward"]
    return rewards


def toolsel_selector_reward(prompts, completions, gold, candidates, **kwargs):
    """Selector GRPO (grpo-selector.*.jsonl): 1 when a completion names the step's gold tool, else 0."""
    texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
    return [float(_post("/v1/rewards/selector", {"gold": g, "candidates": c, "completions": [t]})[0]["reward"])
            for t, g, c in zip(texts, gold, candidates)]
