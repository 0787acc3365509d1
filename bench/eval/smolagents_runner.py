"""Answer one question with smolagents' ToolCallingAgent: a peer in bench/realmodel_eval.py.

Runs in bench/.venv-peers (see peer_tools.py). Reads one JSON job from stdin, prints one JSON
result line on stdout. The step cap is `max_steps`; the sampling goes to OpenAIServerModel as
completion keyword arguments (temperature, seed and max_tokens all reach the server).
"""

from __future__ import annotations

import time
from typing import Any

import peer_tools
from peer_tools import Log, ToolSpec


def _as_smolagents_tool(spec: ToolSpec, log: Log) -> Any:
    from smolagents import Tool

    inputs: dict[str, dict[str, Any]] = {}
    for name, prop in spec.parameters["properties"].items():
        entry = {"type": prop["type"], "description": prop["description"]}
        if "enum" in prop:
            entry["enum"] = prop["enum"]
        if name not in spec.parameters["required"]:
            entry["nullable"] = True
        inputs[name] = entry

    def forward(self: Any, **kwargs: Any) -> str:
        return log.run_tool(spec, kwargs)

    cls = type(
        f"{spec.name}_tool",
        (Tool,),
        {
            "name": spec.name,
            "description": spec.description,
            "inputs": inputs,
            "output_type": "string",
            "skip_forward_signature_validation": True,
            "forward": forward,
        },
    )
    return cls()


def main() -> None:
    job = peer_tools.read_job()
    from smolagents import OpenAIServerModel, ToolCallingAgent

    log = Log()
    tools = [
        _as_smolagents_tool(s, log)
        for s in peer_tools.tool_specs(job["tool_dirs"], job.get("tools"))
    ]
    model = OpenAIServerModel(
        model_id=job["model"],
        api_base=job["base_url"],
        api_key="none",
        client_kwargs={"http_client": peer_tools.http_client(log), "max_retries": 0},
        **job["sampling"],
    )
    agent = ToolCallingAgent(
        tools=tools, model=model, max_steps=job["max_steps"], verbosity_level=0
    )
    started = time.monotonic()
    try:
        result = agent.run(job["question"], return_full_result=True)
    except Exception as error:  # the peer failed: no answer, with its reason
        peer_tools.finish(log, started, None, peer_tools.failure(error), "error")
        return
    answer = "" if result.output is None else str(result.output)
    peer_tools.finish(log, started, answer, state=str(getattr(result, "state", "")))


if __name__ == "__main__":
    main()
