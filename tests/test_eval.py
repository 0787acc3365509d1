"""`toolcall eval`: case files read, calls matched as BFCL's AST checker matches them, answers
graded, the matrix run and traced, resumed without running a case twice, and reported (table,
--json, --fail-under)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from in_process import Finished, toolcall
from terminal_signals import as_from_a_terminal

from toolcall_cli.app.errors import AppError
from toolcall_cli.evaluate._bfcl import read_bfcl, schema
from toolcall_cli.evaluate._grading import ExpectedAnswer
from toolcall_cli.evaluate._matching import (
    ExpectedCall,
    MadeCall,
    Tolerance,
    acceptable,
    calls_problem,
    normalised,
    value_matches,
)
from toolcall_cli.evaluate._verdict import RunOutput, grade
from toolcall_cli.evaluate.cases import CATEGORIES, Case, read_cases
from toolcall_cli.evaluate.figures import RunFigures, RunTally
from toolcall_cli.events import (
    Event,
    IterationStarted,
    ModelFailed,
    ModelReplied,
    RunFinished,
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "eval" / "cases.jsonl"
BFCL = Path(__file__).resolve().parent / "data" / "bfcl"


def cli(tmp_path: Path, *args: str) -> Finished:
    return toolcall(*args, cwd=tmp_path)


def expect(name: str, **args: Any) -> ExpectedCall:
    return ExpectedCall(name, {k: acceptable(v) for k, v in args.items()})


# --- the matching rules, one by one -------------------------------------------------------------


def test_strings_are_normalised_as_bfcl_does() -> None:
    assert normalised("April 1, 2024") == normalised("april 1 2024")
    assert value_matches("New-York", "new york")
    assert value_matches("'a'", '"a"')
    assert not value_matches("Paris", "London")
    assert not value_matches(10, "10")  # a number is not the string of it


def test_numbers_match_within_the_tolerance_and_ints_as_floats() -> None:
    assert value_matches(10, 10.0)
    assert not value_matches(10.5, 10)
    assert value_matches(10.4, 10, Tolerance(abs=0.5, rel=0))
    assert not value_matches(True, 1)  # a boolean is not a number


def test_an_optional_argument_may_be_left_out_but_not_given_wrong() -> None:
    want = [expect("get_weather", city="Paris", day=["today", ""])]
    assert calls_problem([MadeCall("get_weather", {"city": "Paris"})], want) is None
    assert calls_problem([MadeCall("get_weather", {"city": "Paris", "day": "today"})], want) is None
    wrong = calls_problem([MadeCall("get_weather", {"city": "Paris", "day": "tomorrow"})], want)
    assert wrong is not None and wrong.kind == "wrong argument" and "day" in wrong.detail
    missing = calls_problem([MadeCall("get_weather", {"day": "today"})], want)
    assert missing is not None and "missing argument `city`" in missing.detail


def test_an_argument_the_function_does_not_take_is_wrong() -> None:
    problem = calls_problem(
        [MadeCall("calculate", {"expression": "1+1", "round": 2})],
        [expect("calculate", expression="1+1")],
    )
    assert problem is not None and problem.detail.endswith("unexpected argument `round`")


def test_parallel_calls_match_in_any_order() -> None:
    want = [expect("get_weather", city=["Paris", "Tokyo"]), expect("get_weather", city="Paris")]
    # A greedy first pick (Paris for the first) would leave Tokyo for the second, which fails.
    made = [MadeCall("get_weather", {"city": "Paris"}), MadeCall("get_weather", {"city": "Tokyo"})]
    assert calls_problem(made, want) is None
    assert calls_problem(list(reversed(made)), want) is None
    one_short = calls_problem(made[:1], want)
    assert one_short is not None and one_short.kind == "wrong argument"
    extra = calls_problem([*made, MadeCall("get_weather", {"city": "Rome"})], want)
    assert extra is not None and extra.kind == "extra call"


def test_a_run_may_make_more_calls_than_expected_but_one_reply_may_not() -> None:
    made = [MadeCall("get_weather", {"city": "Pari"}), MadeCall("get_weather", {"city": "Paris"})]
    want = [expect("get_weather", city="Paris")]
    assert calls_problem(made, want, exact=False) is None  # a retry after an error
    assert calls_problem(made, want, exact=True) is not None


def test_irrelevance_is_right_only_without_a_call() -> None:
    assert calls_problem([], []) is None
    problem = calls_problem([MadeCall("calculate", {"expression": "1"})], [])
    assert problem is not None and problem.kind == "extra call"


def test_nested_lists_and_objects_match_item_by_item() -> None:
    assert value_matches([1, "a b"], [1.0, "AB"])
    assert not value_matches([1, 2], [2, 1])  # a list keeps its order
    assert value_matches({"k": "v", "n": 2}, {"k": ["v", "w"], "n": [2], "opt": ["", 1]})
    assert not value_matches({"k": "x"}, {"k": ["v"]})


# --- BFCL's format --------------------------------------------------------------------------------


def bfcl_verdict(case: Case, *made: MadeCall) -> tuple[str, str | None]:
    run = RunOutput(stop_reason="limit", answer=None, calls=made, first_calls=made)
    verdict = grade(case, run, None, [], calls_only=True)
    return verdict.outcome, verdict.kind


def test_bfcl_files_are_read_with_their_possible_answers_beside_them() -> None:
    (simple_0, _, simple_2) = read_bfcl(BFCL / "BFCL_v3_simple.json")
    assert simple_0.category == "simple"
    assert [spec.name for spec in simple_0.specs] == ["weather_get_current"]  # `.` is not a name
    assert simple_2.specs[0].parameters["properties"]["base"]["type"] == "number"  # float
    assert simple_0.specs[0].parameters["type"] == "object"  # BFCL's dict
    irrelevance = read_bfcl(BFCL / "BFCL_v3_irrelevance.json")
    assert {case.category for case in irrelevance} == {"irrelevance"}
    assert all(case.no_call for case in irrelevance)


def test_bfcl_cases_are_graded_as_bfcls_ast_checker_grades_them() -> None:
    weather, calc, area = read_bfcl(BFCL / "BFCL_v3_simple.json")
    assert bfcl_verdict(weather, MadeCall("weather_get_current", {"city": "paris, france"})) == (
        "right",
        None,
    )
    assert bfcl_verdict(calc, MadeCall("calculate", {"expression": "23 * 19 + 7"})) == (
        "right",
        None,
    )
    assert bfcl_verdict(area, MadeCall("geometry_triangle_area", {"base": 10.0, "height": 5})) == (
        "right",
        None,
    )
    assert bfcl_verdict(area, MadeCall("geometry_triangle_area", {"base": 10})) == (
        "wrong",
        "wrong argument",
    )
    assert bfcl_verdict(weather, MadeCall("calculate", {"expression": "1"})) == (
        "wrong",
        "wrong tool",
    )
    assert bfcl_verdict(weather) == ("wrong", "no tool")
    (parallel,) = read_bfcl(BFCL / "BFCL_v3_parallel.json")
    tokyo, paris = (MadeCall("weather_get_current", {"city": c}) for c in ("Tokyo", "Paris"))
    assert bfcl_verdict(parallel, tokyo, paris) == ("right", None)
    joke, _ = read_bfcl(BFCL / "BFCL_v3_irrelevance.json")
    assert bfcl_verdict(joke) == ("right", None)
    assert bfcl_verdict(joke, MadeCall("calculate", {"expression": "1"})) == ("wrong", "extra call")


def test_bfcl_type_names_become_json_schema() -> None:
    assert schema(
        {"type": "dict", "properties": {"x": {"type": "tuple", "items": {"type": "any"}}}}
    ) == {
        "type": "object",
        "properties": {"x": {"type": "array", "items": {}}},
    }


def test_calls_only_format_bfcl_grades_the_projects_bfcl_cases_on_the_offline_model(
    tmp_path: Path,
) -> None:
    for path in sorted(BFCL.glob("BFCL_v3_*.json")):
        out = tmp_path / path.stem
        flags = ("--format", "bfcl", "--calls-only", "--strategy", "regex,schema", "--json")
        done = cli(tmp_path, "eval", str(path), *flags, "--out", str(out))
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["calls_only"] is True
        assert report["score"] == 1.0, (path.name, report["runs"])
        # no tool ran: every run stopped after its first reply
        assert all(run["iterations"] == 1 for run in report["runs"])


# --- case files ---------------------------------------------------------------------------------


def write(tmp_path: Path, text: str, name: str = "cases.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"id": "a", "question": "hi"}\n', "say what is right"),
        (
            '{"id": "a", "question": "hi", "no_call": true}\n'
            '{"id": "a", "question": "x", "no_call": true}\n',
            "also the id",
        ),
        ('{"question": "hi", "answer": {"regex": "("}}\n', "regex"),
        ('{"question": "hi", "answer": {"numbers": ["$w.x"]}}\n', "computed by no step"),
        ("not json\n", "not JSON"),
        ('{"question": "", "no_call": true}\n', "empty"),
        ('{"question": "hi", "no_call": true, "bogus": 1}\n', "unknown key 'bogus'"),
        ('{"question": "hi", "category": "odd", "no_call": true}\n', "category must be one of"),
    ],
)
def test_a_bad_case_file_is_one_line_naming_where_and_exit_2(
    tmp_path: Path, text: str, said: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(AppError, match=r"cases\.jsonl"):
        read_cases(path)
    done = cli(tmp_path, "eval", str(path), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert said in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_toml_cases_read_as_json_ones(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'now = "2026-03-14T06:30:00Z"\n[[case]]\nid = "calc"\nquestion = "What is 2+3?"\n'
        '[case.answer]\nnumbers = [5]\n[[case]]\nid = "joke"\nquestion = "Tell me a joke"\n'
        "no_call = true\n",
        "cases.toml",
    )
    calc, joke = read_cases(path)
    assert calc.now == "2026-03-14T06:30:00Z" and calc.category == "answer"
    assert joke.no_call and joke.category == "irrelevance"


def test_answers_are_checked_by_number_string_time_and_regex() -> None:
    assert ExpectedAnswer(numbers=(41.8429,)).holds("about 41.84 km")
    assert not ExpectedAnswer(numbers=(444.0,)).holds("443")
    assert ExpectedAnswer(numbers=(10.0,), tolerance=Tolerance(abs=0.5, rel=0)).holds("10.4°C")
    assert ExpectedAnswer(texts=("Brasília", "巴西利亚")).holds("巴西的首都是巴西利亚")
    assert ExpectedAnswer(times=((15, 30),)).holds("It's 3:30 PM")
    assert ExpectedAnswer(pattern=r"\b444\b").holds("= 444.")
    assert not ExpectedAnswer(pattern=r"\b444\b").holds("4444")


def test_a_computed_answer_is_what_the_tools_return(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        json.dumps(
            {
                "id": "two-step",
                "question": "北京明天最高气温是多少华氏度？",
                "answer": {
                    "compute": [
                        {"as": "w", "tool": "get_weather",
                         "args": {"city": "北京", "day": "tomorrow"}},
                        {"as": "f", "tool": "convert_units",
                         "args": {"value": "$w.high_c", "from_unit": "°C", "to_unit": "°F"}},
                    ],
                    "numbers": ["$f.result"],
                },
            }, ensure_ascii=False,
        ) + "\n",
    )  # fmt: skip
    done = cli(tmp_path, "eval", str(path), "--json", "--out", str(tmp_path / "out"))
    (run,) = json.loads(done.stdout)["runs"]
    assert run["outcome"] == "right", run
    assert "55.4" in run["answer"]  # 13 °C, the high the tool gives, in °F


# --- the examples, the table and the exit code ----------------------------------------------------


def example_cases() -> list[Case]:
    return read_cases(EXAMPLES)


def test_the_example_cases_cover_every_category_in_both_languages() -> None:
    cases = example_cases()
    assert len(cases) >= 40
    for category in CATEGORIES:
        mine = [case for case in cases if case.category == category]
        assert mine, category
        assert {"zh", "en"} <= {
            "zh" if any("\u4e00" <= c <= "\u9fff" for c in case.question) else "en" for case in mine
        }, category


def test_eval_of_the_examples_under_every_strategy_prints_the_table_and_exits_0(
    tmp_path: Path,
) -> None:
    done = cli(tmp_path, "eval", str(EXAMPLES), "--strategy", "all", "--jobs", "2",
                    "--out", str(tmp_path / "out"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    for label in ("regex", "schema tools", "schema json", "schema required", "stream tags"):
        assert f"offline   {label}" in done.stdout
    assert "wrong (which way)" in done.stdout and "Per case" in done.stdout
    results = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    assert len(results) == 5 * len(example_cases())
    again = cli(tmp_path, "eval", str(EXAMPLES), "--strategy", "all", "--fail-under", "1.01",
                     "--out", str(tmp_path / "out"), "--resume")  # fmt: skip
    assert again.returncode == 1
    assert "under --fail-under 1.01" in again.stderr
    assert len((tmp_path / "out" / "results.jsonl").read_text().splitlines()) == len(results)


def test_fail_under_passes_when_the_score_reaches_it(tmp_path: Path) -> None:
    path = write(tmp_path, '{"question": "What is 2+3?", "answer": {"numbers": [5]}}\n')
    done = cli(tmp_path, "eval", str(path), "--fail-under", "1", "--out", str(tmp_path / "o"))
    assert done.returncode == 0, done.stderr


def test_an_expected_call_without_args_grades_the_tool_only(tmp_path: Path) -> None:
    # {"name": "calculate"} reads as "calculate must be called": a right run was graded
    # "wrong argument: unexpected argument `expression`", as if no argument were expected
    path = write(
        tmp_path,
        '{"question": "What is 2+3?", "calls": [{"name": "calculate"}], '
        '"answer": {"numbers": [5]}}\n'
        '{"question": "What is 2+3?", "calls": [{"name": "get_time"}]}\n',
    )
    done = cli(tmp_path, "eval", str(path), "--json", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    right, wrong = json.loads(done.stdout)["runs"]
    assert right["outcome"] == "right", right
    assert (wrong["outcome"], wrong["kind"]) == ("wrong", "wrong tool")


def test_an_html_page_that_cannot_be_written_is_a_usage_error_before_anything_runs(
    tmp_path: Path,
) -> None:
    # exit 1 is what --fail-under says: a CI must not read a bad --html path as a low score
    path = write(tmp_path, '{"question": "What is 2+3?", "answer": {"numbers": [5]}}\n')
    page = tmp_path / "no-such-folder" / "eval.html"
    done = cli(tmp_path, "eval", str(path), "--html", str(page), "--out", str(tmp_path / "o"))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "no-such-folder" in done.stderr
    assert not (tmp_path / "o").exists()


def test_an_out_folder_is_made_but_never_the_folders_above_it(tmp_path: Path) -> None:
    """--out /typo/x made /typo and /typo/x and ran, where every other path toolcall is given
    fails on a missing folder; a file was refused as `File exists`."""
    path = write(tmp_path, '{"question": "What is 2+3?", "answer": {"numbers": [5]}}\n')
    (tmp_path / "afile").write_text("mine", encoding="utf-8")
    for out, said in (("typo/x", "no folder"), ("afile", "is not a folder")):
        done = cli(tmp_path, "eval", str(path), "--out", str(tmp_path / out))
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
    assert not (tmp_path / "typo").exists()
    assert (tmp_path / "afile").read_text(encoding="utf-8") == "mine"
    made = cli(tmp_path, "eval", str(path), "--out", str(tmp_path / "new"))
    assert made.returncode == 0 and (tmp_path / "new" / "results.jsonl").is_file()


# --- traces and resuming ------------------------------------------------------------------------


def test_every_run_is_a_trace_in_the_evals_folder_that_doctor_and_trace_show_read(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path, '{"id": "off", "question": "What is 2+2?", "answer": {"numbers": [5]}}\n'
    )
    done = cli(tmp_path, "eval", str(path), "--json", "--out", str(tmp_path / "out"))
    (run,) = json.loads(done.stdout)["runs"]
    assert (run["outcome"], run["kind"]) == ("wrong", "wrong answer")
    trace = Path(run["trace"])
    assert trace.parent == tmp_path / "out" / "traces"
    shown = cli(tmp_path, "trace", "show", str(trace), "--plain")
    assert shown.returncode == 0 and "2+2" in shown.stdout
    assert cli(tmp_path, "doctor", str(trace)).returncode == 0
    listed = cli(tmp_path, "trace", "list", "--json")
    # the user's own traces are not pushed out: none listed (one JSON object a line, no lines)
    assert listed.returncode == 0 and listed.stdout == ""


def test_an_interrupted_eval_resumes_where_it_stopped_with_no_case_run_twice(
    tmp_path: Path,
) -> None:
    lines = EXAMPLES.read_text(encoding="utf-8").splitlines()[1:13]
    path = write(tmp_path, "\n".join(lines) + "\n")
    out = tmp_path / "out"
    first = cli(
        tmp_path, "eval", str(path), "--strategy", "regex,schema", "--out", str(out), "--json"
    )
    assert first.returncode == 0
    records = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(records) == 24
    # As an interruption leaves it: 10 runs written, the 11th cut off mid-line.
    (out / "results.jsonl").write_text("\n".join(records[:10]) + "\n" + records[10][:30])
    kept = {json.loads(line)["trace"]: Path(json.loads(line)["trace"]).stat().st_mtime_ns
            for line in records[:10]}  # fmt: skip
    flags = ("--strategy", "regex,schema", "--out", str(out), "--json")
    again = cli(tmp_path, "eval", str(path), *flags, "--resume")
    assert again.returncode == 0, again.stderr
    assert "not a run record" in again.stderr
    report = json.loads(again.stdout)
    assert len(report["runs"]) == 24
    keys = [(r["model"], r["strategy"], r["case"], r["seed"]) for r in report["runs"]]
    assert len(set(keys)) == 24
    for trace, mtime in kept.items():  # the runs already done were not run again
        assert Path(trace).stat().st_mtime_ns == mtime


def test_a_run_resumed_after_an_interruption_has_a_trace_of_its_own(tmp_path: Path) -> None:
    # Stopped mid-run, a run's result is not recorded but its trace is begun; --resume ran it
    # again into the same file, which then held two runs, the unfinished one first, so
    # `trace show`, doctor and replay of the trace the grid names read that one first.
    path = write(
        tmp_path, '{"id": "sum", "question": "What is 2+3?", "answer": {"numbers": [5]}}\n'
    )
    out = tmp_path / "out"
    assert cli(tmp_path, "eval", str(path), "--out", str(out)).returncode == 0
    (out / "results.jsonl").write_text("")  # as a stop mid-run leaves it: no result yet
    (trace,) = (out / "traces").iterdir()
    attempt = trace.read_text(encoding="utf-8")
    again = cli(tmp_path, "eval", str(path), "--out", str(out), "--resume", "--json")
    assert again.returncode == 0, again.stderr
    (run,) = json.loads(again.stdout)["runs"]
    assert Path(run["trace"]) == trace
    assert trace.read_text(encoding="utf-8").count('"kind": "run_started"') == 1
    kept = out / "traces" / f"{trace.stem}.unfinished-1.jsonl"
    assert kept.read_text(encoding="utf-8") == attempt  # what the first attempt wrote is kept
    doctor = cli(tmp_path, "doctor", str(trace), "--json")
    assert len(json.loads(doctor.stdout)["runs"]) == 1


def test_ctrl_c_during_an_eval_says_what_is_kept_and_how_to_go_on(tmp_path: Path) -> None:
    # typer turns a Ctrl-C into a silent exit 130: an eval of an hour stopped without a word of
    # its folder or of --resume.
    import signal
    import subprocess
    import sys

    from fake_openai import Answer, FakeOpenAI, completion

    path = write(
        tmp_path, '{"id": "sum", "question": "What is 2+3?", "answer": {"numbers": [5]}}\n'
    )
    out = tmp_path / "out"
    with FakeOpenAI() as server:
        # The stop is seen when the request in flight ends (a worker thread cannot be
        # interrupted), so the answer comes late, but not long after the Ctrl-C.
        server.answers.append(Answer(json_body=completion("5"), delay=3))
        command = [sys.executable, "-m", "toolcall_cli", "eval", str(path), "--model", "m",
                   "--base-url", server.base_url, "--out", str(out)]  # fmt: skip
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            # as a terminal starts it: a suite run in the background passes SIGINT on ignored
            preexec_fn=as_from_a_terminal,
        )
        try:
            assert server.wait_received(1)  # the run's request is in flight
            process.send_signal(signal.SIGINT)
        finally:
            err = stopped(process)
    assert process.returncode == 130
    assert err.strip().splitlines() == stop_line("interrupted (Ctrl-C)", 0, 1, out)


def test_an_eval_whose_model_was_never_reached_exits_1(tmp_path: Path) -> None:
    # A server down or a wrong URL: every run "no answer (model_failed)", and the eval exited 0,
    # as if it had measured something; a CI job without --fail-under passed.
    path = write(tmp_path, '{"question": "What is 2+3?", "answer": {"numbers": [5]}}\n' * 2)
    done = cli(tmp_path, "eval", str(path), "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
               "--out", str(tmp_path / "out"))  # fmt: skip
    assert done.returncode == 1
    [line] = [line for line in done.stderr.splitlines() if "every run" in line]
    assert line.startswith("toolcall: error: every run failed at the model, m: cannot connect")
    assert "0/2" in done.stdout  # the report is still shown


def test_resume_without_out_takes_the_last_eval_of_the_case_file(tmp_path: Path) -> None:
    path = write(tmp_path, '{"question": "What is 2+3?", "answer": {"numbers": [5]}}\n')
    assert cli(tmp_path, "eval", str(path)).returncode == 0
    again = cli(tmp_path, "eval", str(path), "--resume", "--repeat", "2", "--json")
    assert again.returncode == 0, again.stderr
    runs = json.loads(again.stdout)["runs"]
    assert [run["seed"] for run in runs] == [0, 1]
    never = cli(
        tmp_path,
        "eval",
        str(write(tmp_path, '{"question": "x", "no_call": true}\n', "b.jsonl")),
        "--resume",
    )
    assert never.returncode == 2 and "no eval of" in never.stderr


def test_resume_in_a_folder_that_is_not_there_is_a_usage_error_not_a_new_eval(
    tmp_path: Path,
) -> None:
    # A typo in --out with --resume started the whole eval again in a new folder.
    path = write(tmp_path, '{"question": "What is 2+3?", "answer": {"numbers": [5]}}\n')
    assert cli(tmp_path, "eval", str(path), "--out", str(tmp_path / "o")).returncode == 0
    typo = cli(tmp_path, "eval", str(path), "--out", str(tmp_path / "0"), "--resume")
    assert typo.returncode == 2, typo.stderr
    assert f"--resume: no eval to resume in {tmp_path / '0'}: no such folder" in typo.stderr
    assert not (tmp_path / "0").exists()
    again = cli(tmp_path, "eval", str(path), "--out", str(tmp_path / "o"), "--resume")
    assert again.returncode == 0, again.stderr


def test_an_eval_folder_is_not_written_over(tmp_path: Path) -> None:
    path = write(tmp_path, '{"question": "What is 2+3?", "answer": {"numbers": [5]}}\n')
    assert cli(tmp_path, "eval", str(path), "--out", str(tmp_path / "o")).returncode == 0
    again = cli(tmp_path, "eval", str(path), "--out", str(tmp_path / "o"))
    assert again.returncode == 2 and "--resume" in again.stderr


def test_evals_of_one_case_file_begun_in_the_same_second_get_folders_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A script (or CI) that runs two evals of a file back to back: the second is not refused
    for the first one's folder, and --resume takes the later."""
    monkeypatch.setattr("toolcall_cli.evaluate.runner.stamp", lambda: "20250102-030405")
    path = write(tmp_path, '{"question": "What is 2+3?", "answer": {"numbers": [5]}}\n')
    first = cli(tmp_path, "eval", str(path), "--json")
    second = cli(tmp_path, "eval", str(path), "--json")
    assert (first.returncode, second.returncode) == (0, 0), second.stderr
    folders = [Path(json.loads(done.stdout)["folder"]).name for done in (first, second)]
    assert folders == ["20250102-030405-cases", "20250102-030405-cases-2"]
    again = cli(tmp_path, "eval", str(path), "--resume", "--json")
    assert Path(json.loads(again.stdout)["folder"]).name == folders[1]


def test_several_models_are_rows_of_their_own(tmp_path: Path) -> None:
    path = write(tmp_path, '{"question": "What is 2+3?", "answer": {"numbers": [5]}}\n')
    done = cli(tmp_path, "eval", str(path), "--model", "offline", "--strategy", "regex,stream",
                    "--repeat", "2", "--json", "--out", str(tmp_path / "o"))  # fmt: skip
    report = json.loads(done.stdout)
    assert [(row["model"], row["strategy"], row["runs"]) for row in report["rows"]] == [
        ("offline", "regex", 2),
        ("offline", "stream tags", 2),
    ]
    bad = cli(tmp_path, "eval", str(path), "--strategy", "regexx", "--out", str(tmp_path / "p"))
    assert bad.returncode == 2 and "unknown 'regexx'" in bad.stderr


SLOW_TOOL = (
    "import time\nfrom toolcall_cli import tool\n\n\n@tool\n"
    "def lookup_stock(symbol: str) -> str:\n"
    '    """Look up the stock price of a company by its ticker symbol."""\n'
    "    time.sleep(600)\n    return symbol\n"
)


@pytest.mark.parametrize(
    ("stop", "code", "said", "reason"),
    [
        ("SIGTERM", 143, "terminated (SIGTERM)", "sigterm"),
        ("SIGHUP", 129, "terminated (SIGHUP)", "sighup"),
        ("SIGINT", 130, "interrupted (Ctrl-C)", "ctrl-c"),
    ],
)
def test_an_eval_told_to_stop_ends_its_runs_traces_with_the_signal_and_does_not_wait_for_tools(
    tmp_path: Path, stop: str, code: int, said: str, reason: str
) -> None:
    """SIGTERM and SIGHUP were written as `ctrl-c`, and the eval waited for the runs under way
    to reach their next event: a tool that takes its time held the process (the runs' worker
    threads were joined at exit). Ctrl-C exited 130 without a word; SIGTERM and SIGHUP said
    the eval's stop line and then a second one, "toolcall: terminated"."""
    import signal

    out = tmp_path / "out"
    process = patched_eval(tmp_path, "", *slow_eval(tmp_path, "AAPL", "MSFT", "NVDA"), str(out))
    try:
        inside_the_tools(process, out)
        process.send_signal(getattr(signal, stop))
    finally:
        # Far less than the tool's 600 s: the eval does not wait for it.
        err = stopped(process)
    assert process.returncode == code, err
    assert err.strip().splitlines() == stop_line(said, 0, 3, out)
    traces = sorted(out.glob("traces/*.jsonl"))
    assert len(traces) == 2  # the third run never started
    for trace in traces:
        records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
        assert records[-2]["kind"] == "run_finished"
        assert records[-2]["stop_reason"] == "interrupted"
        assert records[-1]["kind"] == "interrupted" and records[-1]["reason"] == reason
    assert not (out / "results.jsonl").exists() or not (out / "results.jsonl").read_text()


def slow_eval(tmp_path: Path, *symbols: str) -> list[str]:
    """The arguments of an eval whose runs each call a tool that takes ten minutes, two at a
    time, up to `--out` (the folder is the caller's)."""
    tools = tmp_path / "slow"
    tools.mkdir()
    (tools / "slow.py").write_text(SLOW_TOOL, encoding="utf-8")
    path = write(tmp_path, "".join(
        f'{{"id": "s{n}", "question": "What is the stock price of {symbol}?", '
        f'"calls": [{{"name": "lookup_stock", "args": {{"symbol": "{symbol}"}}}}]}}\n'
        for n, symbol in enumerate(symbols)
    ))  # fmt: skip
    return [str(path), "--tools", str(tools), "--tool-timeout", "900", "--jobs", "2", "--out"]


def inside_the_tools(process: Any, out: Path) -> None:
    """Waits until both of the eval's workers are inside the slow tool."""
    import time

    def started() -> int:
        texts = [p.read_text(encoding="utf-8") for p in out.glob("traces/*.jsonl")]
        return sum('"tool_started"' in text for text in texts)

    deadline = time.monotonic() + 60
    while started() < 2:
        assert time.monotonic() < deadline and process.poll() is None, "no tool started"
        time.sleep(0.05)


def stopped(process: Any) -> str:
    """What an eval told to stop wrote on stderr, once it has ended (killed if it does not
    within a minute: the test then fails on its exit code, and no process is left behind)."""
    try:
        return str(process.communicate(timeout=60)[1])
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def stop_line(said: str, done: int, total: int, out: Path) -> list[str]:
    """The one line a stopped eval says: what stopped it, what is kept, how to go on."""
    return [
        f"toolcall: {said}: {done} of {total} runs done, kept in {out}; the same command with "
        "--resume goes on from there"
    ]


def patched_eval(tmp_path: Path, prelude: str, *args: str) -> Any:
    """`toolcall eval ARGS` in a process of its own, `prelude` run first (to patch the runner),
    started as a terminal starts it: a suite run in the background passes SIGINT on ignored."""
    import subprocess
    import sys

    code = f"{prelude}\nfrom toolcall_cli.cli import main\nmain()\n"
    return subprocess.Popen(
        [sys.executable, "-c", code, "eval", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        preexec_fn=as_from_a_terminal,
    )  # fmt: skip


def test_a_second_ctrl_c_while_an_eval_stops_does_not_cut_the_stop_short(tmp_path: Path) -> None:
    """Ctrl-C twice in a row: the second one, raised while the stop ended the traces of the runs
    under way, cut that short, and those traces were left without their end."""
    import signal

    out = tmp_path / "out"
    prelude = (  # the second Ctrl-C comes just as the stop begins
        "import signal\nfrom toolcall_cli.evaluate.runner import Runner\n"
        "halt = Runner.halt\n"
        "def twice(self, why):\n"
        "    signal.raise_signal(signal.SIGINT)\n"
        "    halt(self, why)\n"
        "Runner.halt = twice\n"
    )
    process = patched_eval(tmp_path, prelude, *slow_eval(tmp_path, "AAPL", "MSFT"), str(out))
    try:
        inside_the_tools(process, out)
        process.send_signal(signal.SIGINT)
    finally:
        err = stopped(process)
    assert process.returncode == 130, err
    assert err.strip().splitlines() == stop_line("interrupted (Ctrl-C)", 0, 2, out)
    for trace in sorted(out.glob("traces/*.jsonl")):
        last = json.loads(trace.read_text(encoding="utf-8").splitlines()[-1])
        assert (last["kind"], last["reason"]) == ("interrupted", "ctrl-c"), trace.name


def test_a_run_that_ends_as_the_eval_stops_is_not_recorded_after_the_stop_line(
    tmp_path: Path,
) -> None:
    """A run whose last event came just before the stop went on to be graded, and its result
    was written after the stop line had said how many runs were done."""
    path = write(
        tmp_path, '{"id": "sum", "question": "What is 2+3?", "answer": {"numbers": [5]}}\n'
    )
    out = tmp_path / "out"
    prelude = (  # Ctrl-C between the run's end and its result; the stop goes first
        "import os, signal, threading\nfrom toolcall_cli.evaluate.runner import Runner\n"
        "halted, tried = threading.Event(), threading.Event()\n"
        "record, halt = Runner._record, Runner.halt\n"
        "def late(self, run):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    halted.wait(30)\n"
        "    try:\n"
        "        record(self, run)\n"
        "    finally:\n"
        "        tried.set()\n"
        "def stop(self, why):\n"
        "    halt(self, why)\n"
        "    halted.set()\n"
        "    tried.wait(30)\n"
        "Runner._record, Runner.halt = late, stop\n"
    )
    process = patched_eval(tmp_path, prelude, str(path), "--out", str(out))
    err = stopped(process)
    assert process.returncode == 130, err
    assert err.strip().splitlines() == stop_line("interrupted (Ctrl-C)", 0, 1, out)
    results = out / "results.jsonl"
    assert not results.exists() or not results.read_text(encoding="utf-8")


def test_only_the_first_stop_signal_acts_while_a_stop_is_under_way() -> None:
    import signal

    from toolcall_cli.cli.entry import first_stop_only

    # as a terminal starts a process: a suite run in the background has SIGINT ignored
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    stops = 0
    try:
        with first_stop_only():
            try:
                signal.raise_signal(signal.SIGINT)
            except KeyboardInterrupt:
                stops += 1
                signal.raise_signal(signal.SIGINT)  # pressed again while stopping: nothing
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)
    assert stops == 1


# --- tokens of a model that reports no usage ------------------------------------------------------


def tallied(*events: Event) -> RunFigures:
    tally = RunTally("m", 0)
    for event in events:
        tally.add(event)
    return tally.figures()


REQUEST = {"messages": [{"role": "user", "content": "What is 12*5+3? " * 40}]}


def test_a_run_whose_requests_got_no_reply_used_no_tokens() -> None:
    # A server never reached: the request was never sent, so nothing is estimated ("~1,244"
    # was shown for such runs); 0 is what the run used, not a guess.
    figures = tallied(
        IterationStarted(iteration=1, request=REQUEST),
        ModelFailed(message="cannot connect", error_kind="connection"),
        RunFinished(stop_reason="model_failed", iterations=1, tool_calls=0, elapsed=0.0),
    )
    assert (figures.tokens, figures.tokens_estimated) == (0, False)


def test_a_reply_without_usage_is_estimated_with_its_request_but_a_failed_request_is_not() -> None:
    answered: list[Event] = [
        IterationStarted(iteration=1, request=REQUEST),
        ModelReplied(iteration=1, raw="63", text="63"),
    ]
    once = tallied(
        *answered, RunFinished(stop_reason="answered", iterations=1, tool_calls=0, elapsed=0.0)
    )
    assert once.tokens_estimated and once.tokens > 100  # the request's words are counted
    then_failed = tallied(
        *answered,
        IterationStarted(iteration=2, request=REQUEST),
        ModelFailed(message="cannot connect", error_kind="connection"),
        RunFinished(stop_reason="model_failed", iterations=2, tool_calls=0, elapsed=0.0),
    )
    assert then_failed.tokens == once.tokens


def test_eval_against_a_server_never_reached_shows_no_estimated_tokens(
    tmp_path: Path, refusing_port: int
) -> None:
    url = f"http://127.0.0.1:{refusing_port}/v1"
    first = next(line for line in EXAMPLES.read_text(encoding="utf-8").splitlines() if "{" in line)
    path = write(tmp_path, first + "\n")
    done = cli(tmp_path, "eval", str(path), "--model", "m", "--base-url", url, "--out", "o")
    [row] = [line for line in done.stdout.splitlines() if line.startswith("m ")]
    assert "~" not in row and row.split()[-2] == "0"


def a_runner() -> Any:
    """A Runner with nothing to run: enough to drive one run's events and a stop by hand."""
    from toolcall_cli.evaluate.runner import Runner

    return Runner(plan=None, toolboxes={}, expected={}, retrieval={})  # type: ignore[arg-type]


RUN_KEY_ARGS = {"model": "offline", "strategy": "regex", "case": "c1", "seed": 0}


class OneRun:
    """A runner with nothing to run and one run's key and trace: the run's events are driven,
    and the main thread's stop raced against them, by hand."""

    def __init__(self, path: Path) -> None:
        from toolcall_cli.evaluate.runner import RunKey
        from toolcall_cli.trace import TraceWriter

        self.runner = a_runner()
        self.key = RunKey(**RUN_KEY_ARGS, calls_only=False)  # type: ignore[arg-type]
        self.path = path
        self.writer = TraceWriter.open(path)

    def consume(self, events: Any) -> None:
        """The run's thread: its events into its trace, which it then lets go of (closes), as
        Runner.run does once the events are through or the run failed."""
        from toolcall_cli.evaluate.runner import RunReader

        tally = RunTally("regex", 0, str(self.path))
        try:
            self.runner._consume(self.key, events, self.writer, tally, RunReader())
        finally:
            self.writer.close()

    def records(self) -> list[dict[str, Any]]:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]


@pytest.fixture
def one_run(tmp_path: Path) -> OneRun:
    return OneRun(tmp_path / "run.jsonl")


def test_an_eval_stopped_just_after_a_run_finished_leaves_that_runs_trace_whole(
    one_run: OneRun,
) -> None:
    """Ctrl-C landing after a run's own run_finished, before its thread let go of the trace:
    the main thread appended a second run_finished (interrupted) and an interrupted line to a
    trace that had ended well."""
    from toolcall_cli.events import RunFinished, RunStarted

    def events() -> Any:
        yield RunStarted(question="q", model="offline", strategy="regex", tools=())
        yield RunFinished(stop_reason="answered", iterations=1, tool_calls=0, elapsed=0.1)
        one_run.runner.halt(KeyboardInterrupt())  # the main thread, before this run's is done

    one_run.consume(events())
    records = one_run.records()
    assert [r["kind"] for r in records] == ["run_started", "run_finished"]
    assert records[-1]["stop_reason"] == "answered"


def test_an_eval_stopped_as_a_run_lets_go_of_its_trace_writes_nothing_to_it(
    one_run: OneRun,
) -> None:
    """The main thread ends the runs it found under way; one of them may have let go of its
    trace (and closed it) meanwhile: writing to the closed file raised ValueError, and the
    eval's Ctrl-C became an internal error."""
    from toolcall_cli.events import RunStarted

    runner, found = one_run.runner, []

    def events() -> Any:
        yield RunStarted(question="q", model="offline", strategy="regex", tools=())
        found.append(runner.live[one_run.key])  # what the main thread's halt() would be holding

    one_run.consume(events())
    runner._end(found[0], runner.why_stopped)  # the main thread, with its list of runs
    assert [r["kind"] for r in one_run.records()] == ["run_started"]


def test_a_run_that_fails_ends_the_eval_without_waiting_for_the_runs_under_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A failed run stopped the eval and ended the other runs' traces, but the eval waited for
    each of them to come back (a slow tool, a model taking its time) before saying why."""
    import threading
    from types import SimpleNamespace

    from toolcall_cli.evaluate import runner as runner_module

    release, came_back = threading.Event(), threading.Event()

    def fake_finish(runner: Any, run: tuple[Any, ...], done: Any) -> None:
        if run[2].id == "fails":
            raise RuntimeError("the run failed")
        release.wait(30)  # a tool that takes its time
        came_back.set()

    monkeypatch.setattr(runner_module, "finish", fake_finish)
    server = SimpleNamespace(server="offline")
    runs = [(server, None, SimpleNamespace(id=name), 0) for name in ("slow", "fails")]
    plan = SimpleNamespace(runs=lambda: runs, key=lambda *run: run[2].id, done={}, jobs=2)
    runner = a_runner()
    runner.plan = plan
    try:
        with pytest.raises(RuntimeError, match="the run failed"):
            runner_module.run_group(runner, {"slow", "fails"}, lambda run: None)
        assert not came_back.is_set()  # the eval said why while the slow run was still out
    finally:
        release.set()


def test_a_run_toolcall_fails_in_ends_its_trace_as_a_crash(one_run: OneRun) -> None:
    """The run whose failure stopped the eval left its trace without an end (doctor: cut off,
    'no record of an interruption'), while the runs it stopped were said to have crashed."""
    from toolcall_cli.events import RunStarted

    def events() -> Any:
        yield RunStarted(question="q", model="offline", strategy="regex", tools=())
        raise KeyError("x")  # a bug of toolcall's, mid-run

    with pytest.raises(KeyError):
        one_run.consume(events())
    records = one_run.records()
    assert [r["kind"] for r in records] == ["run_started", "run_finished", "interrupted"]
    assert records[1]["stop_reason"] == "interrupted"
    assert records[2]["reason"] == "crash" and records[2]["detail"] == "KeyError: 'x'"


def test_an_eval_whose_trace_stops_taking_writes_says_so_as_a_failure_not_a_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's trace on a disk that filled up: the eval ended with 'internal error:
    TraceWriteError ... (a bug in toolcall ...)'."""
    from toolcall_cli.trace import TraceWriteError, TraceWriter

    def full(self: TraceWriter, event: Any) -> None:
        raise TraceWriteError(f"cannot write the trace file {self.path}: No space left on device")

    monkeypatch.setattr(TraceWriter, "write", full)
    case = '{"id": "sum", "question": "What is 2+3?", "answer": {"numbers": [5]}}\n'
    done = cli(tmp_path, "eval", str(write(tmp_path, case)), "--out", str(tmp_path / "out"))
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("toolcall: error: cannot write the trace"), done.stderr
    assert "internal error" not in done.stderr and "No space left on device" in done.stderr
