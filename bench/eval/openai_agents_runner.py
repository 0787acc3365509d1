"""Answer one question with the OpenAI Agents SDK: a peer in bench/realmodel_eval.py.

Runs in bench/.venv-peers (see peer_tools.py). The tools are `FunctionTool`s over the same
functions and schemas (non-strict: the schemas have optional arguments); the model is
`OpenAIChatCompletionsModel` (llama-server has no Responses API); the step cap is
`Runner.run(max_turns=...)` (MaxTurnsExceeded: no answer); temperature and max_tokens are
ModelSettings fields, the seed goes in `extra_args`. Tracing is off (it would post to OpenAI).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import peer_tools
from peer_tools import Log, ToolSpec


def _as_function_tool(spec: ToolSpec, log: Log) -> Any:
    from agents import FunctionTool

    async def invoke(_context: Any, arguments: str) -> str:
        try:
            parsed = json.loads(arguments or "{}")
        except ValueError as error:
            return f"Error: the arguments are not JSON: {error}"
        if not isinstance(parsed, dict):
            return "Error: the arguments must be a JSON object"
        return log.run_tool(spec, parsed)

    return FunctionTool(
        name=spec.name,
        description=spec.description,
        params_json_schema=spec.parameters,
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )


async def _run(job: dict[str, Any], log: Log) -> Any:
    from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, Runner
    from openai import AsyncOpenAI

    client = AsyncOpenAI(
        base_url=job["base_url"],
        api_key="none",
        http_client=peer_tools.async_http_client(log),
        max_retries=0,
    )
    sampling = dict(job["sampling"])
    seed = sampling.pop("seed", None)
    settings = ModelSettings(**sampling, extra_args={"seed": seed} if seed is not None else None)
    agent = Agent(
        name="assistant",
        instructions="You are a helpful assistant.",
        model=OpenAIChatCompletionsModel(model=job["model"], openai_client=client),
        model_settings=settings,
        tools=[
            _as_function_tool(s, log)
            for s in peer_tools.tool_specs(job["tool_dirs"], job.get("tools"))
        ],
    )
    return await Runner.run(agent, job["question"], max_turns=job["max_steps"])


def main() -> None:
    job = peer_tools.read_job()
    from agents import set_tracing_disabled

    set_tracing_disabled(True)
    log = Log()
    started = time.monotonic()
    try:
        result = asyncio.run(_run(job, log))
    except Exception as error:  # the peer failed: no answer, with its reason
        peer_tools.finish(log, started, None, peer_tools.failure(error), "error")
        return
    output = result.final_output
    peer_tools.finish(log, started, "" if output is None else str(output), state="success")


if __name__ == "__main__":
    main()
