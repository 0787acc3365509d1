"""Answer one question with pydantic-ai's Agent: a peer in bench/realmodel_eval.py.

Runs in bench/.venv-peers (see peer_tools.py). The tools are `Tool.from_schema` over the same
functions and schemas; the step cap is `UsageLimits(request_limit=...)` (a run that needs more
requests fails: no answer); temperature, seed and max_tokens go in ModelSettings.
"""

from __future__ import annotations

import time
from typing import Any

import peer_tools
from peer_tools import Log, ToolSpec


def _as_pydantic_tool(spec: ToolSpec, log: Log) -> Any:
    from pydantic_ai import Tool

    def run(**kwargs: Any) -> str:
        return log.run_tool(spec, kwargs)

    return Tool.from_schema(run, name=spec.name, description=spec.description,
                            json_schema=spec.parameters)  # fmt: skip


def main() -> None:
    job = peer_tools.read_job()
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.settings import ModelSettings
    from pydantic_ai.usage import UsageLimits

    log = Log()
    provider = OpenAIProvider(
        base_url=job["base_url"], api_key="none", http_client=peer_tools.async_http_client(log)
    )
    model = OpenAIChatModel(job["model"], provider=provider)
    settings = ModelSettings(max_retries=0, **job["sampling"])  # type: ignore[typeddict-item]
    tools = [
        _as_pydantic_tool(s, log) for s in peer_tools.tool_specs(job["tool_dirs"], job.get("tools"))
    ]
    agent = Agent(model, tools=tools, model_settings=settings)
    started = time.monotonic()
    try:
        result = agent.run_sync(
            job["question"], usage_limits=UsageLimits(request_limit=job["max_steps"])
        )
    except Exception as error:  # the peer failed: no answer, with its reason
        peer_tools.finish(log, started, None, peer_tools.failure(error), "error")
        return
    peer_tools.finish(log, started, str(result.output), state="success")


if __name__ == "__main__":
    main()
