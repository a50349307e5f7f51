"""A plain openai-SDK agent loop that carries only the tools toolsel selects (needs `pip install
openai` and OPENAI_API_KEY). `run_tool` is where your code calls the real tool. Prints the model's
last answer. test/client/python-client.test.ts runs it against a stand-in Chat Completions server
(OPENAI_BASE_URL) where python3 has the openai package.

    npm start &                                   # toolsel serve with the demo library
    TOOLSEL_URL=http://localhost:8080 python3 clients/python/examples/openai_agent_loop.py "text Bob that I am late"
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, List

from openai import OpenAI

from toolsel import ToolselClient


def run_tool(tool_id: str, arguments: Dict[str, Any]) -> Any:
    """Your tools' implementation, by toolsel tool id (here: say what would run)."""
    return {"ok": True, "tool": tool_id, "arguments": arguments}


def main(instruction: str, model: str = "gpt-4.1-mini") -> None:
    toolsel = ToolselClient()  # TOOLSEL_URL, TOOLSEL_API_KEY
    tools = toolsel.select_openai_tools(instruction)  # the list `tools=` takes, with .tool_ids
    openai = OpenAI()
    messages: List[Any] = [{"role": "user", "content": instruction}]
    for _ in range(8):
        completion = openai.chat.completions.create(model=model, messages=messages, tools=tools)
        message = completion.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            print(message.content)
            return
        for call in message.tool_calls:
            if call.type != "function":
                continue
            tool_id = tools.tool_id(call.function.name)  # sms--send_sms -> sms.send_sms
            result = run_tool(tool_id, json.loads(call.function.arguments or "{}"))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
    print("stopped after 8 turns")


if __name__ == "__main__":
    main(" ".join(sys.argv[1:]) or "What is the weather in Paris tomorrow, and email the forecast to Ann")
