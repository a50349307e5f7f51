"""AsyncToolselClient in an asyncio agent: the tools for several instructions at once (one
client, its keep-alive connections shared), as the openai SDK takes them. Prints one JSON object:
instruction -> the tool ids offered (each provider tool name mapped back with ``tool_id``).

    npm start &
    TOOLSEL_URL=http://localhost:8080 python3 clients/python/examples/async_select.py \
        "text Bob that I am late" "email Ann the weather in Paris"
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Dict, List

try:
    from toolsel import AsyncToolselClient
except ImportError:  # run from a checkout without `pip install ./clients/python`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from toolsel import AsyncToolselClient


async def main(instructions: List[str]) -> Dict[str, List[str]]:
    async with AsyncToolselClient(timeout=10) as toolsel:  # TOOLSEL_URL, TOOLSEL_API_KEY
        lists = await asyncio.gather(*(toolsel.select_openai_tools(text) for text in instructions))
    return {
        text: [tools.tool_id(tool["function"]["name"]) for tool in tools]
        for text, tools in zip(instructions, lists)
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1:] or ["text Bob that I am late"]))))
