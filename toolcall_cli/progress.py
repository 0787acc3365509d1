"""Whether a run's tool rounds get anywhere, and when they stop getting anywhere: the rounds in
a row without progress, and the rounds that only asked again for what the model already had
(a call repeated, whatever it gave the first time)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from toolcall_cli.feedback import answer_note
from toolcall_cli.limits import Limits
from toolcall_cli.messages import ToolCall, ToolResult, call_key


@dataclass
class Progress:
    """What one run's rounds have achieved so far, round by round."""

    failed_rounds: int = 0
    """Rounds in a row without progress: every call failed or repeated one, or no answer."""
    repeated_rounds: int = 0
    """Rounds in a row whose every call repeated an earlier one: its result reused, or the
    same call failing again."""
    repeated_calls: tuple[str, ...] = ()
    only_failures_repeated: bool = False
    """The last repeated round repeated failed calls only (none gave a result before)."""
    failed: set[tuple[str, str]] = field(default_factory=set)
    """Every call of this run that failed (tool and arguments)."""
    succeeded: dict[tuple[str, str], str] = field(default_factory=dict)
    """Every call of this run that gave a result (tool and arguments), with the result."""

    def count(self, results: Sequence[ToolResult], calls: Sequence[ToolCall]) -> None:
        """One round's results. A round where every call failed, or only repeated an earlier
        call, made no progress. A round that only asked again for what the model has is counted
        apart, and ends sooner: a call that failed, sent again unchanged, fails again (three
        identical refusals of calculate(expression=..., round="2") in a row, then the limit,
        from Qwen2.5-0.5B), as a call that succeeded gives the same result again."""
        keys = {call.id: call_key(call) for call in calls}
        reused, repeats = self.repeats(results, keys)
        stuck = all(not r.ok or r in reused for r in results)
        self.failed_rounds = self.failed_rounds + 1 if stuck else 0
        if results and len(repeats) == len(results):
            self.repeated_rounds += 1
            self.repeated_calls = tuple(dict.fromkeys(f"`{r.name}`" for r in repeats if r.name))
            self.only_failures_repeated = not reused
        else:
            self.repeated_rounds = 0
        self.failed.update(keys[r.call_id] for r in results if not r.ok and r.call_id in keys)
        self.succeeded.update(
            (keys[r.call_id], r.content) for r in results if r.call_id in keys and r.ok
        )

    def repeats(
        self, results: Sequence[ToolResult], keys: dict[str, tuple[str, str]]
    ) -> tuple[list[ToolResult], list[ToolResult]]:
        """The results reused from earlier calls, or run again and the same (a tool whose
        result may change, get_time, runs each time it is called; the same call giving the
        same result again is no progress: Qwen2.5-0.5B asked get_time the same five times,
        then the limit; a status that changed between two polls is), and those plus the calls
        that failed before and failed again."""
        reused = [
            r
            for r in results
            if r.cached
            or r.error_kind == "repeated"
            or (r.ok and self.succeeded.get(keys.get(r.call_id, ("", ""))) == r.content)
        ]
        failed_again = [
            r
            for r in results
            if not r.ok and r not in reused and keys.get(r.call_id) in self.failed
        ]
        return reused, reused + failed_again

    def no_answer(self) -> None:
        """A reply that was no answer: no progress either."""
        self.failed_rounds += 1

    def withdrawal(self, limits: Limits, question: str) -> tuple[str, bool] | None:
        """The note that withdraws the tools, and whether it is for repeats; None while the
        rounds are still within the limits."""
        repeating = self.repeated_rounds >= limits.max_repeated_rounds
        if not repeating and self.failed_rounds < limits.max_failed_rounds:
            return None
        if not repeating:
            return answer_note("no_progress", question, n=self.failed_rounds), False
        calls = ", ".join(self.repeated_calls) or "the same tools"
        key = (
            "answer_after_failed_repeats" if self.only_failures_repeated else "answer_after_repeats"
        )
        return answer_note(key, question, calls=calls), True
