"""Step 4: did the loop end, and why: an answer, a limit, a timeout, tools withdrawn, a failed
model, an interruption? Rounds that went nowhere (a repeated call, a reply that was not an
answer) are found here too: they are how a loop fails to end."""

from __future__ import annotations

from collections.abc import Iterator

from toolcall_cli.doctor._model import Finding, Record, RunRecords, Step
from toolcall_cli.wording import plural

QUESTION = "Did the loop end, and why?"

_NOT_AN_ANSWER = "the model's reply was not an answer"
_CUT_ANSWER = 'the answer stopped at the token limit (finish_reason "length"), maybe mid-sentence'


def check_ending(run: RunRecords, writing: int | None = None) -> Step:
    """`writing`: the pid of the trace's writer when it still runs and this is its last run."""
    finished = run.last("run_finished")
    answered = run.answered
    findings = [*_repeated_calls(run, answered), *_not_answers(run, answered), *_cut_answer(run)]
    withdrawn = run.first("answer_without_tools")
    if withdrawn is not None:
        rounds = withdrawn.data.get("failed_rounds")
        # A number as the trace holds it; a trace written by hand may hold anything.
        counted = plural(rounds, "round") if type(rounds) is int else "rounds"
        message = f"after {counted} without progress, tools were withdrawn"
        # Named as the live view names it: a failed call sent again had no result to reuse.
        if withdrawn.data.get("failed_again"):
            message = "the model sent a failed call again unchanged, so tools were withdrawn"
        elif withdrawn.data.get("repeated"):
            message = "the model repeated a call whose result it had, so tools were withdrawn"
        findings.append(Finding.at(withdrawn, "tools_withdrawn", message))
    summary, stop = _stop(run, finished, writing)
    findings.extend(stop)
    if withdrawn is not None and answered:
        summary += ", without tools"
    return Step(4, QUESTION, summary, tuple(sorted(findings, key=lambda f: f.event or 0)))


def _stop(
    run: RunRecords, finished: Record | None, writing: int | None
) -> tuple[str, list[Finding]]:
    interrupted = run.last("interrupted")
    if finished is None:
        last = run.records[-1]
        if interrupted is not None:
            return "no: interrupted", [_interrupted(interrupted)]
        if writing is not None:
            message = (
                f"the trace ends at event {last.event} ({last.kind}) with no run_finished yet: "
                f"its writer (pid {writing}) is still running, so the run is still being "
                "written; run doctor again once it ends"
            )
            under_way = Finding.at(last, "still_writing", message, note=True)
            return "not yet: the run is still under way", [under_way]
        message = (
            f"the trace ends at event {last.event} ({last.kind}) with no run_finished: "
            "the run was cut off (a crash or a kill)"
        )
        return "no: the trace ends before the run did", [Finding.at(last, "cut_off", message)]
    stop = str(finished.data.get("stop_reason"))
    iterations = finished.data.get("iterations")
    if stop == "answered":
        return f"yes: answered at iteration {iterations}", []
    if stop == "limit":
        return _limit(run, finished)
    if stop == "model_failed":
        failed = run.last("model_failed") or finished
        kind = failed.data.get("error_kind", "unknown")
        message = f"the model failed ({kind}): {failed.data.get('message', '')}"
        return f"yes: the model failed ({kind})", [
            Finding.at(failed, "model_failed", message, tool=str(kind))
        ]
    if stop == "interrupted":
        found = _interrupted(interrupted) if interrupted else None
        message = f"interrupted at iteration {iterations}"
        return "yes: interrupted", [
            found or Finding.at(finished, "interrupted", message, note=True)
        ]
    message = f"the run stopped before any request ({stop})"
    return f"yes: {stop}", [Finding.at(finished, stop, message)]


def _cut_answer(run: RunRecords) -> Iterator[Finding]:
    """An answer that stopped at the token limit: the run ended, but maybe mid-sentence."""
    final = run.last("final_answer")
    if final is not None and final.data.get("cut"):
        yield Finding.at(final, "cut_answer", _CUT_ANSWER)


def _limit(run: RunRecords, finished: Record) -> tuple[str, list[Finding]]:
    limit = run.last("limit_reached") or finished
    which = str(limit.data.get("limit", "iterations"))
    best = run.last("final_answer")
    after = " (a best-effort answer was made without tools)" if best else ""
    message = f"{limit.data.get('message', 'a limit was reached')}{after}"
    code = "timeout" if which == "timeout" else "iteration_limit"
    return f"yes, at a limit: {which}", [Finding.at(limit, code, message)]


def _interrupted(record: Record) -> Finding:
    """A run stopped from outside (Ctrl-C, `q` at a --step pause, a signal, stdout's reader
    gone) is a note: nothing in it went wrong, and the steps check it as far as it got. A run
    toolcall itself failed in (reason `crash`) is a problem."""
    reason = record.data.get("reason", "interrupted")
    detail = record.data.get("detail")
    message = f"interrupted ({reason})" + (f": {detail}" if detail else "")
    if reason == "crash":
        return Finding.at(record, "crashed", message)
    return Finding.at(record, "interrupted", message, note=True)


def _repeated_calls(run: RunRecords, answered: bool) -> Iterator[Finding]:
    recovered = "the run still answered" if answered else None
    for record in run.of("tool_finished"):
        if not (record.data.get("result") or {}).get("cached"):
            continue
        call = record.data.get("call") or {}
        name = str(call.get("name"))
        message = (
            f"{call.get('id')}: `{name}` called again with the same arguments; "
            "the earlier result was handed back"
        )
        yield Finding.at(
            record, "repeated_call", message, fixable=True, recovered=recovered, tool=name
        )


def _not_answers(run: RunRecords, answered: bool) -> Iterator[Finding]:
    for record in run.of("notice"):
        text = str(record.data.get("message", ""))
        if text.startswith(_NOT_AN_ANSWER):
            recovered = "the run answered later" if answered else None
            yield Finding.at(record, "not_an_answer", text, fixable=True, recovered=recovered)
