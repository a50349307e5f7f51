"""Planner and selector rewards for TRL's GRPOTrainer, computed by a running `toolsel serve` (standard library only).

Dataset rows come from `toolsel train-data grpo`: grpo-planner.*.jsonl (columns prompt, instruction,
gold, library) and grpo-selector.*.jsonl (prompt, gold, candidates); TRL passes the columns to the
reward function as keyword arguments.
"""
import json
import os
import urllib.error
import urllib.request

TOOLSEL_URL = os.environ.get("TOOLSEL_URL", "http://127.0.0.1:8080").rstrip("/")  # the root, no path
TOOLSEL_KEY = os.environ.get("TOOLSEL_API_KEY")  # a read key, when the server requires keys


def _post(path, body):
    """POSTs to toolsel and returns its rewards; a failure raises ToolselRewardError naming the fix."""
    headers = {"content-type": "application/json"}
    if TOOLSEL_KEY:
        headers["authorization"] = "Bearer " + TOOLSEL_KEY
    request = urllib.request.Request(TOOLSEL_URL + path, json.dumps(body).encode(), headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.load(response)["rewards"]
    except urllib.error.HTTPError as error:
        raise ToolselRewardError(_http_failure(path, body, error)) from None
    except urllib.error.URLError as error:
        raise ToolselRewardError(
            f"Cannot reach toolsel at {TOOLSEL_URL} ({error.reason}): start it with "
            "`toolsel serve --library <the rows' library>` (settings as in the data card), "
            "or set TOOLSEL_URL to where it listens."
        ) from None


class ToolselRewardError(RuntimeError):
    """toolsel refused or could not be reached; the message is the server's, plus what to do."""


def _http_failure(path, body, error):
    try:
        problem = json.load(error)["error"]
        code, message = problem["code"], problem["message"]
    except Exception:  # not toolsel's {error: {code, message}}: another server on that port
        return (f"POST {TOOLSEL_URL}{path} answered HTTP {error.code} {error.reason}, not as toolsel "
                "does: is TOOLSEL_URL the address of `toolsel serve`?")
    hint = {
        "UNKNOWN_LIBRARY": f"serve the library the rows name (\"{body.get('library')}\"): "
                           "`toolsel serve --library <it>`, from the file or saved index the data card lists",
        "UNKNOWN_TOOL": "the gold ids are not that library's: serve the library the data card lists "
                        "(same file, same content hash)",
        "UNAUTHORIZED": "set TOOLSEL_API_KEY to a read key of the server",
        "FORBIDDEN": "set TOOLSEL_API_KEY to a read key of the server",
        "NOT_FOUND": f"TOOLSEL_URL ({TOOLSEL_URL}) must be the server's root, as http://127.0.0.1:8080, "
                     "without a path such as /v1",
    }.get(code)
    return f"toolsel {path}: HTTP {error.code} {code}: {message}" + (f" Fix: {hint}." if hint else "")


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
    """Selector GRPO (grpo-selector.*.jsonl): 1 when a completion names the step's gold tool, else 0.

    The completions of one step (same gold and candidates) are scored in one request.
    """
    texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
    groups = {}
    for index, key in enumerate(zip(gold, map(tuple, candidates))):
        groups.setdefault(key, []).append(index)
    rewards = [0.0] * len(texts)
    for (step_gold, step_candidates), indexes in groups.items():
        body = {"gold": step_gold, "candidates": list(step_candidates),
                "completions": [texts[i] for i in indexes]}
        for i, scored in zip(indexes, _post("/v1/rewards/selector", body)):
            rewards[i] = float(scored["reward"])
    return rewards
