"""The agent loop of openai_agent_loop.py with a stand-in model, so it runs anywhere (standard
library only, no model, nothing sent beyond toolsel): toolsel selects the tools, the "model" calls
each tool it is offered in turn, and the loop maps each call back to a tool id and runs it.
Prints one JSON object: the tools offered (as the openai SDK takes them) and the calls made.
With --feedback it reports the tools used to toolsel (`POST /v1/feedback`, needs the admin key).

    npm start &
    TOOLSEL_URL=http://localhost:8080 python3 clients/python/examples/agent_loop_offline.py "text Bob that I am late"
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List

try:
    from toolsel import ToolselClient
except ImportError:  # run from a checkout without `pip install ./clients/python`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from toolsel import ToolselClient


def stand_in_model(tools: List[Dict[str, Any]], turn: int) -> Dict[str, Any]:
    """Calls the tool offered at position `turn` with no arguments, then answers in text."""
    if turn < len(tools):
        return {"tool_call": {"name": tools[turn]["function"]["name"], "arguments": "{}"}}
    return {"content": "done"}


def main(argv: List[str]) -> int:
    feedback = "--feedback" in argv
    instruction = " ".join(arg for arg in argv if arg != "--feedback") or "text Bob that I am late"
    toolsel = ToolselClient()
    tools = toolsel.select_openai_tools(instruction)
    calls = []
    for turn in range(8):
        reply = stand_in_model(tools, turn)
        if "tool_call" not in reply:
            break
        name = reply["tool_call"]["name"]
        tool_id = tools.tool_id(name)
        schema = toolsel.get_tool(tools.answer["components"]["library"], tool_id)
        calls.append({"name": name, "id": tool_id, "required": schema["parameters"].get("required", [])})
    if feedback and calls:
        toolsel.feedback(instruction, [call["id"] for call in calls])
    print(json.dumps({"instruction": instruction, "tools": tools, "calls": calls}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
