"""Answer one question with LangGraph's prebuilt ReAct agent: a peer in bench/realmodel_eval.py.

Runs in bench/.venv-peers (see peer_tools.py). `create_react_agent` over langchain-openai's
ChatOpenAI (temperature, seed and max_tokens are its fields), the tools `StructuredTool`s over
the same functions with the same JSON Schemas. The step cap: `recursion_limit` 2 × steps (each
model call and each tool round is a graph step), so at most `steps` model calls; when it runs
out, the prebuilt agent itself answers "Sorry, need more steps to process this request." and
returns normally: that is graded as a non-answer.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import peer_tools
from peer_tools import Log, ToolSpec


def _as_structured_tool(spec: ToolSpec, log: Log) -> Any:
    from langchain_core.tools import StructuredTool

    def run(**kwargs: Any) -> str:
        return log.run_tool(spec, kwargs)

    return StructuredTool.from_function(
        func=run, name=spec.name, description=spec.description, args_schema=spec.parameters
    )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks
        return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return str(content)


def main() -> None:
    job = peer_tools.read_job()
    from langchain_openai import ChatOpenAI

    with warnings.catch_warnings():  # the prebuilt agent is deprecated in favour of langchain's
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

    log = Log()
    model = ChatOpenAI(
        model=job["model"],
        base_url=job["base_url"],
        api_key="none",  # type: ignore[arg-type]
        http_client=peer_tools.http_client(log),
        max_retries=0,
        **job["sampling"],
    )
    tools = [
        _as_structured_tool(s, log)
        for s in peer_tools.tool_specs(job["tool_dirs"], job.get("tools"))
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(model, tools)
    started = time.monotonic()
    try:
        state = agent.invoke(
            {"messages": [("user", job["question"])]},
            {"recursion_limit": 2 * job["max_steps"]},
        )
    except Exception as error:  # the peer failed: no answer, with its reason
        peer_tools.finish(log, started, None, peer_tools.failure(error), "error")
        return
    last = state["messages"][-1]
    peer_tools.finish(log, started, _text(last.content), state="success")


if __name__ == "__main__":
    main()
