"""Planner reward for TRL's GRPOTrainer, computed by a running `toolsel serve` (standard library only).

Dataset rows come from `toolsel train-data grpo` (grpo-planner.*.jsonl): columns prompt, instruction,
gold and library, which TRL passes to the reward function as keyword arguments.
"""
import json
import os
import urllib.request

TOOLSEL_URL = os.environ.get("TOOLSEL_URL", "http://127.0.0.1:8080")
TOOLSEL_KEY = os.environ.get("TOOLSEL_API_KEY")  # a read key, when the server requires keys


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
        headers = {"content-type": "application/json"}
        if TOOLSEL_KEY:
            headers["authorization"] = "Bearer " + TOOLSEL_KEY
        request = urllib.request.Request(TOOLSEL_URL + "/v1/rewards/planner", json.dumps(body).encode(), headers)
        with urllib.request.urlopen(request, timeout=60) as response:
            for i, scored in zip(indexes, json.load(response)["rewards"]):
                rewards[i] = scored["reward"]
    return rewards
