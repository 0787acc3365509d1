"""Tool retrieval: the rankers, the tools each request carries, search_tools, the embeddings
endpoint and its cache, the settings, and how the views show the choice."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from in_process import toolcall
from many_tools import TOOLS, write_plugin
from rich.console import Console

from toolcall_cli.events import ChosenTool, Event, FinalAnswer, Notice, RunStarted, ToolsChosen
from toolcall_cli.loop import run
from toolcall_cli.messages import Message, ToolSpec
from toolcall_cli.models.embeddings import EmbeddingClient
from toolcall_cli.models.scripted import ScriptedModel
from toolcall_cli.offline import OfflineModel
from toolcall_cli.render import make_renderer
from toolcall_cli.render._plain import PlainRenderer
from toolcall_cli.request_tools import SEARCH_TOOLS, Retrieval
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.embed_cache import VectorFile, spec_hash
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools
from toolcall_cli.tools.registry import ToolRegistry
from toolcall_cli.tools.retrieval import (
    BM25,
    SYNONYM_WEIGHT,
    EmbedRanker,
    RankingFailed,
    bridged,
    query_terms,
    rank,
    synonyms,
    tokens,
    value_words,
)


def spec(tool_name: str, description: str, **parameters: str) -> ToolSpec:
    properties = {key: {"type": "string", "description": text} for key, text in parameters.items()}
    return ToolSpec(tool_name, description, {"type": "object", "properties": properties})


SPECS = [
    spec("get_weather", "Current weather and forecast for a city.", city="City name"),
    spec("get_exchange_rate", "Exchange rate between two currencies.", pair="e.g. USD/CNY"),
    spec("loan_payment", "Monthly payment of a loan or mortgage.", principal="Amount borrowed"),
    spec("translate_text", "Translate text into another language.", text="The text"),
    spec("get_time", "Current time in a time zone.", timezone="IANA zone"),
    spec("convert_units", "Convert a value between units of length or weight.", value="Number"),
]


@pytest.fixture
def many_registry(tmp_path: Path) -> ToolRegistry:
    """The bundled tools and fifty-six realistic others: sixty in all."""
    write_plugin(tmp_path / "many")
    loaded = load_tools([bundled_tools_dir(), tmp_path / "many"])
    assert not loaded.problems
    return loaded.registry


def ask(question: str, registry: ToolRegistry, model: Any, **choice: Any) -> list[Event]:
    """One question, at the start of a conversation."""
    return ask_in([], question, registry, model, **choice)


def ask_in(
    history: list[Message], question: str, registry: ToolRegistry, model: Any, **choice: Any
) -> list[Event]:
    """One turn of a conversation that goes on in `history`."""
    strategy = get_strategy(choice.pop("strategy", "regex"))
    return list(
        run(
            question,
            model=model,
            strategy=strategy,
            registry=registry,
            history=history,
            retrieval=Retrieval(**choice),
        )
    )


def chosen(events: list[Event]) -> list[ToolsChosen]:
    return [e for e in events if isinstance(e, ToolsChosen)]


def offered(body: dict[str, Any]) -> list[str]:
    """The tool names a request carries, natively or in a text protocol's system prompt."""
    if body.get("tools"):
        return [t["function"]["name"] for t in body["tools"]]
    return []


# --- words and BM25 -----------------------------------------------------------------------


def test_names_split_on_snake_and_camel_case_and_words_are_stemmed() -> None:
    # Snowball stems: `exchange` and `exchanging` both become `exchang`.
    assert tokens("getExchangeRate") == ["exchang", "rate"]
    assert tokens("convert_currency rates cities") == tokens("converting currencies rate city")


def test_the_snowball_stemmer_joins_forms_the_old_plural_rule_missed() -> None:
    # Each pair shares a stem: -ing, -ed, -ment(s) and -ly forms, not only plurals.
    for asked, described in [
        ("borrowing", "borrow"),
        ("decoded", "decode"),
        ("payments", "payment"),
        ("monthly", "month"),
        ("annualized", "annual"),
    ]:
        assert tokens(asked) == tokens(described), (asked, described)


def test_chinese_is_cut_into_characters_and_bigrams() -> None:
    assert tokens("天气预报") == ["天", "气", "预", "报", "天气", "气预", "预报"]
    # Mixed text: the Latin words and the Chinese run each by their own rule.
    assert tokens("USD汇率") == ["usd", "汇", "率", "汇率"]


def test_bm25_ranks_the_tool_whose_words_the_question_uses_first() -> None:
    assert rank("What is the exchange rate of USD to CNY?", SPECS, 1)[0][0] == "get_exchange_rate"
    assert rank("monthly mortgage payment on 300000", SPECS, 1)[0][0] == "loan_payment"
    top = rank("weather in Paris", SPECS, 3)
    assert top[0][0] == "get_weather" and top[0][1] > top[1][1]


def test_a_rare_word_weighs_more_than_a_common_one() -> None:
    specs = [
        spec("a_tool", "Current value of the current thing, current current."),
        spec("b_tool", "The mortgage."),
        spec("c_tool", "Current stuff."),
    ]
    assert rank("current mortgage", specs, 1)[0][0] == "b_tool"


def test_a_word_in_the_name_weighs_more_than_the_same_word_in_the_description() -> None:
    specs = [
        spec("figure_tool", "Works out a mortgage figure."),
        spec("mortgage_tool", "Works out a figure."),
    ]
    assert rank("mortgage", specs, 1)[0][0] == "mortgage_tool"
    # The field weight is what decides: weigh the name at nothing and the other tool wins.
    unnamed = BM25(weights={"name": 0.0, "description": 1.0, "parameters": 1.0})
    assert rank("mortgage", specs, 1, unnamed)[0][0] == "figure_tool"


def test_symbols_are_read_as_the_words_descriptions_use_for_them() -> None:
    assert value_words("17.5% of 2,340") == "percent"
    assert value_words("25°C in °F") == "celsius fahrenheit"
    assert tokens("(128 + 256) × 3 ÷ 4") == tokens(
        "128 256 3 4 plus add times multiply divide arithmetic expression"
    )


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("12*5+3", "arithmetic expression"),
        ("100 - 7", "arithmetic expression"),
        ("#e67e22", "hex colour color"),
        ("192.168.1.10", "ip address"),
        ("alice@example.com", "email address"),
        ("https://example.com/a?b=1", "url link"),
        ("MCMXCIV", "roman numeral"),
        ("aGVsbG8gd29ybGQ=", "base64 encoded"),
        ("2025-06-10", "date"),
        ("2025年3月10日", "date"),
        ("9:30", "time"),
    ],
)
def test_a_value_is_read_as_the_words_for_its_kind(text: str, kind: str) -> None:
    # After the words for its symbols, if any (`+` in 12*5+3 is also "plus add").
    assert value_words(text).endswith(kind) and value_words(text).count(kind) == 1


@pytest.mark.parametrize(
    "text",
    # A date, a range, a pair, a network, a hyphenated word, an identifier, short capitals.
    ["2025-06-10 3/10", "2-3 days", "USD/CNY", "well-known", "getUserById2024", "MIX CD VI"],
)
def test_look_alikes_are_not_read_as_arithmetic_base64_or_roman_numerals(text: str) -> None:
    assert not {"arithmetic", "base64", "roman"} & set(value_words(text).split())


def test_a_question_written_in_symbols_finds_the_tool_that_describes_them_in_words() -> None:
    specs = [
        spec("calculate", "Arithmetic: plus, minus, times, divided by, percent.", expression="x"),
        spec("contrast_ratio", "WCAG contrast ratio of two hex colours.", colors="Two colors"),
        spec("roman_numerals", "Convert between Roman numerals and numbers.", value="x"),
        spec("decode_text", "Decode base64 encoded text.", data="The data"),
    ]
    assert rank("(128 + 256) × 3 ÷ 4", specs, 1)[0][0] == "calculate"
    assert rank("What's 17.5% of 2,340?", specs, 1)[0][0] == "calculate"
    assert rank("#e67e22 on #ffffff", specs, 1)[0][0] == "contrast_ratio"
    assert rank("MCMXCIV", specs, 1)[0][0] == "roman_numerals"
    assert rank("aGVsbG8gd29ybGQ=", specs, 1)[0][0] == "decode_text"


def test_english_synonyms_join_a_question_to_a_tool_worded_otherwise() -> None:
    # `borrowing` is read as its stem, `borrow`, whose synonym is `loan`.
    assert synonyms(tokens("borrowing")) == tokens("loan")
    assert synonyms(tokens("colours")) == tokens("color")
    assert synonyms(tokens("kenya")) == []
    specs = [
        spec("loan_payment", "Monthly payment of a loan.", principal="Amount"),
        spec("salary_convert", "Monthly pay from a yearly salary.", amount="Amount"),
    ]
    assert rank("I'm borrowing 350k, what do I pay each month?", specs, 1)[0][0] == "loan_payment"


def test_a_synonym_weighs_less_than_the_word_the_user_wrote() -> None:
    weights = query_terms([("borrow", 1.0)])
    assert weights[tokens("borrow")[0]] == 1.0
    assert weights[tokens("loan")[0]] == SYNONYM_WEIGHT < 1.0


def test_the_bridge_reads_the_longest_chinese_word_it_knows() -> None:
    assert bridged("今天天气怎么样") == tokens("today date weather forecast")
    # 空气质量 is one word: not also 空气 on its own.
    assert bridged("空气质量") == tokens("air quality aqi pollution")
    assert bridged("no chinese here") == []


def test_chinese_questions_find_english_described_tools_through_the_bridge() -> None:
    assert rank("北京天气怎么样？", SPECS, 1)[0][0] == "get_weather"
    assert rank("美元兑人民币汇率是多少", SPECS, 1)[0][0] == "get_exchange_rate"
    assert rank("房贷月供怎么算", SPECS, 1)[0][0] == "loan_payment"
    assert rank("东京现在几点", SPECS, 1)[0][0] == "get_time"
    assert rank("把这句话翻译成英文", SPECS, 1)[0][0] == "translate_text"
    distance = spec("distance_km", "Great-circle distance between two cities.", city="A city")
    assert rank("北京到上海多远", [*SPECS, distance], 1)[0][0] == "distance_km"


def test_recall_at_5_over_the_test_catalogue() -> None:
    """Each test tool, asked for by its own description reworded, lands in the top five."""
    specs = [spec(name, text, **{param: about}) for name, text, param, about in TOOLS]
    questions = {
        "get_stock_quote": "how much is AAPL stock trading at",
        "track_package": "where is my parcel, tracking number 1Z999",
        "nutrition_facts": "how many calories in an apple",
        "dns_lookup": "what are the DNS records of example.com",
        "visa_requirements": "do I need a visa to travel to Japan",
        "air_quality": "上海的空气质量怎么样",
        "send_email": "发一封邮件给 bob@example.com",
        "book_hotel": "帮我预订杭州的酒店",
    }
    for name, question in questions.items():
        assert name in [n for n, _ in rank(question, specs, 5)], question


# --- the loop ----------------------------------------------------------------------------


def test_the_offline_model_answers_with_at_most_k_tools_a_request(
    many_registry: ToolRegistry,
) -> None:
    assert len(many_registry) == 60
    model = OfflineModel()
    events = ask("What's the weather in Tokyo?", many_registry, model, strategy="schema")
    choices = chosen(events)
    assert choices and all(len(c.sent) <= 6 and c.total == 60 for c in choices)
    assert choices[0].sent[0].name == "get_weather"
    assert choices[0].sent[-1] == ChosenTool(SEARCH_TOOLS, None)
    answers = [e for e in events if isinstance(e, FinalAnswer)]
    assert answers and "Tokyo" in answers[0].text


@pytest.mark.parametrize("strategy", ["regex", "schema", "stream"])
def test_every_strategy_sends_only_the_chosen_tools(
    many_registry: ToolRegistry, strategy: str
) -> None:
    model = ScriptedModel(["It is sunny."])
    events = ask("weather in Oslo", many_registry, model, strategy=strategy, k=4)
    sent = [tool.name for tool in chosen(events)[0].sent]
    assert len(sent) == 4 and sent[0] == "get_weather" and sent[-1] == SEARCH_TOOLS
    body = json.dumps(model.requests[0], ensure_ascii=False)
    for name in many_registry.names():
        # Whatever the protocol (native tools, or a system prompt listing them), only the sent
        # tools are in the request.
        assert bool(re.search(rf"\b{name}\b", body)) == (name in sent), name


def test_retrieval_stays_off_at_or_below_the_threshold() -> None:
    registry = ToolRegistry(load_tools([bundled_tools_dir()]).registry)
    model = ScriptedModel(["fine"])
    events = ask("weather in Oslo", registry, model, strategy="schema")
    assert chosen(events) == []
    assert len(offered(model.requests[0])) == len(registry)


def test_retrieve_zero_turns_it_off_even_with_many_tools(many_registry: ToolRegistry) -> None:
    model = ScriptedModel(["fine"])
    events = ask("weather in Oslo", many_registry, model, strategy="schema", k=0)
    assert chosen(events) == []
    assert len(offered(model.requests[0])) == 60


def test_search_tools_adds_what_it_found_to_the_next_request(many_registry: ToolRegistry) -> None:
    call = {"name": SEARCH_TOOLS, "arguments": {"query": "parcel shipment tracking"}}
    model = ScriptedModel([{"tool_calls": [call]}, "found it"])
    events = ask("weather in Oslo", many_registry, model, strategy="schema", k=4)
    first, second = offered(model.requests[0]), offered(model.requests[1])
    assert "track_package" not in first
    assert second[0] == "track_package" and len(second) == 4 and second[-1] == SEARCH_TOOLS
    assert chosen(events)[1].added[0] == "track_package"
    assert chosen(events)[1].sent[0].found
    result = next(e for e in events if getattr(e, "kind", "") == "tool_finished")
    assert "track_package" in result.result.content  # type: ignore[union-attr]


def test_a_registered_tool_not_sent_still_runs_and_the_view_says_so(
    many_registry: ToolRegistry,
) -> None:
    call = {"name": "roll_dice", "arguments": {"spec": "2d6"}}
    model = ScriptedModel([{"tool_calls": [call]}, "rolled"])
    events = ask("weather in Oslo", many_registry, model, strategy="schema", k=4)
    notes = [e.message for e in events if isinstance(e, Notice)]
    assert any("roll_dice, which this request did not carry" in n for n in notes)
    result = next(e for e in events if getattr(e, "kind", "") == "tool_finished")
    assert result.result.ok  # type: ignore[union-attr]


def test_a_tool_the_model_called_stays_in_the_requests_that_follow(
    many_registry: ToolRegistry,
) -> None:
    call = {"name": "get_weather", "arguments": {"city": "Oslo"}}
    model = ScriptedModel([{"tool_calls": [call]}, "done"])
    events = ask("plan my trip to Oslo", many_registry, model, strategy="schema", k=3)
    first, second = ([t.name for t in c.sent] for c in chosen(events))
    # Nothing in the question names it; the model reached for it, so the next request has it.
    assert "get_weather" not in first and second[0] == "get_weather"


def test_the_ranked_tools_stay_put_for_the_whole_run(many_registry: ToolRegistry) -> None:
    # The tool result is full of another tool's words; the set must not follow them.
    call = {"name": "get_weather", "arguments": {"city": "Oslo"}}
    model = ScriptedModel([{"tool_calls": [call]}, "done"])
    events = ask("weather in Oslo", many_registry, model, strategy="schema", k=4)
    first, second = ([t.name for t in c.sent] for c in chosen(events))
    assert first == second


def test_a_follow_up_is_ranked_with_the_previous_turn(many_registry: ToolRegistry) -> None:
    history: list[Message] = []
    ask_in(history, "weather in Oslo", many_registry, ScriptedModel(["Sunny in Oslo."]), k=3)
    events = ask_in(history, "and in Paris?", many_registry, ScriptedModel(["Rain."]), k=3)
    assert chosen(events)[0].sent[0].name == "get_weather"
    alone = ask("and in Paris?", many_registry, ScriptedModel(["Rain."]), k=3)
    assert chosen(alone)[0].sent[0].name != "get_weather"


# --- embeddings --------------------------------------------------------------------------


def fake_embeddings(asked: list[list[str]]) -> httpx.MockTransport:
    """Vectors by keyword: the first axis for weather words, the second for money words."""

    def vector(text: str) -> list[float]:
        low = text.lower()
        return [
            float("weather" in low or "天气" in low),
            float("exchange" in low or "currenc" in low),
            0.1,
        ]

    def handle(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/embeddings"
        assert request.headers.get("authorization") == "Bearer sk-test-key-1234"
        body = json.loads(request.content)
        asked.append(body["input"])
        data = [{"index": i, "embedding": vector(t)} for i, t in enumerate(body["input"])]
        return httpx.Response(200, json={"data": data, "model": body["model"]})

    return httpx.MockTransport(handle)


def test_embed_ranks_by_cosine_and_caches_tool_vectors(tmp_path: Path) -> None:
    asked: list[list[str]] = []
    client = EmbeddingClient(
        "http://127.0.0.1:9/v1", "emb", "sk-test-key-1234", transport=fake_embeddings(asked)
    )
    store = VectorFile(tmp_path / "vectors.json")
    ranker = EmbedRanker(client, "emb", store)
    assert rank("北京天气", SPECS, 1, ranker)[0][0] == "get_weather"
    assert len(asked) == 2 and len(asked[0]) == len(SPECS)  # the tools, then the question
    saved = json.loads((tmp_path / "vectors.json").read_text())
    assert spec_hash(SPECS[0], "emb") in saved and len(saved) == len(SPECS)
    # A second ranker (a new session) reads the file: only the question is embedded now.
    again = EmbedRanker(client, "emb", VectorFile(tmp_path / "vectors.json"))
    assert rank("exchange rate", SPECS, 1, again)[0][0] == "get_exchange_rate"
    assert len(asked) == 3 and asked[2] == ["exchange rate"]


def test_a_vector_cache_that_cannot_be_written_is_one_warning_and_ranking_goes_on(
    many_registry: ToolRegistry, tmp_path: Path
) -> None:
    asked: list[list[str]] = []
    client = EmbeddingClient(
        "http://127.0.0.1:9/v1", "emb", "sk-test-key-1234", transport=fake_embeddings(asked)
    )
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache's directory should be")
    ranker = EmbedRanker(client, "emb", VectorFile(blocker / "vectors.json"))
    call = {"name": "get_weather", "arguments": {"city": "Oslo"}}
    model = ScriptedModel([{"tool_calls": [call]}, "done"])
    events = ask("weather in Oslo", many_registry, model, strategy="schema", ranker=ranker)
    warnings = [e.message for e in events if isinstance(e, Notice) and e.level == "warning"]
    assert len([w for w in warnings if "cannot keep tool vectors" in w]) == 1  # said once
    assert all(c.ranker == "embed" for c in chosen(events))
    assert chosen(events)[0].sent[0].name == "get_weather"


def test_the_spec_hash_changes_with_the_spec_and_the_model() -> None:
    changed = spec("get_weather", "Weather, now with wind.", city="City name")
    assert spec_hash(SPECS[0], "a") != spec_hash(changed, "a")
    assert spec_hash(SPECS[0], "a") != spec_hash(SPECS[0], "b")
    assert spec_hash(SPECS[0], "a") == spec_hash(SPECS[0], "a")


def test_a_failing_endpoint_is_one_line_and_the_request_ranks_lexically(
    many_registry: ToolRegistry,
) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"error": {"message": "bad key sk-test-key-1234"}})

    client = EmbeddingClient(
        "http://127.0.0.1:9/v1", "emb", "sk-test-key-1234", transport=httpx.MockTransport(refuse)
    )
    with pytest.raises(RankingFailed, match="HTTP 401") as failure:
        rank("weather", SPECS, 1, EmbedRanker(client, "emb"))
    assert "sk-test-key-1234" not in str(failure.value) and "\n" not in str(failure.value)
    call = {"name": "get_weather", "arguments": {"city": "Oslo"}}
    model = ScriptedModel([{"tool_calls": [call]}, "fine"])
    events = ask(
        "weather in Oslo", many_registry, model, strategy="schema", ranker=EmbedRanker(client, "e")
    )
    warnings = [e.message for e in events if isinstance(e, Notice) and e.level == "warning"]
    # One line for the run, not one a request: the endpoint is not asked again.
    assert len([w for w in warnings if "ranked lexically for the rest of the run" in w]) == 1
    assert len(chosen(events)) == 2 and all(c.ranker == "lexical" for c in chosen(events))
    assert chosen(events)[0].sent[0].name == "get_weather"


# --- the views and the trace -------------------------------------------------------------

CHOICE = ToolsChosen(
    iteration=1,
    total=60,
    sent=(ChosenTool("track_package", 3.2, found=True), ChosenTool("get_weather", 7.125)),
    ranker="lexical",
    added=("track_package",),
)


def test_the_plain_view_shows_the_tools_sent_and_their_scores() -> None:
    out = io.StringIO()
    renderer = make_renderer("plain", out)
    renderer.handle(CHOICE)
    assert out.getvalue() == (
        "sent 2 of 60 tools (lexical): track_package 3.20 (found), get_weather 7.12; "
        "added by search_tools: track_package\n"
    )


def test_the_live_view_shows_the_tools_sent() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=False, color_system=None)
    renderer = make_renderer("live", console, auto_refresh=False)
    renderer.handle(CHOICE)
    renderer.close()
    assert "tools: sent 2 of 60 tools (lexical): track_package 3.20 (found)" in out.getvalue()


# --- the command line --------------------------------------------------------------------


def test_run_shows_the_choice_and_trace_show_shows_it_again(tmp_path: Path) -> None:
    write_plugin(tmp_path / "many")
    trace = tmp_path / "t.jsonl"
    done = toolcall(
        "run", "--tools", str(tmp_path / "many"), "--trace", str(trace),
        "What's the weather in Paris?", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("sent "))
    assert line.startswith("sent 6 of 60 tools (lexical): get_weather ")
    assert '"kind": "tools_chosen"' in trace.read_text()
    shown = toolcall("trace", "show", str(trace), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "tools: " + line in " ".join(shown.stdout.split())  # the view wraps at 80 columns


def test_json_output_carries_the_choice(tmp_path: Path) -> None:
    write_plugin(tmp_path / "many")
    done = toolcall(
        "run", "--json", "--no-trace", "--tools", str(tmp_path / "many"), "--retrieve", "3",
        "weather in Paris", cwd=tmp_path,
    )  # fmt: skip
    records = [json.loads(line) for line in done.stdout.splitlines()]
    choice = next(r for r in records if r["kind"] == "tools_chosen")
    assert choice["sent"][0]["name"] == "get_weather" and len(choice["sent"]) == 3


@pytest.mark.parametrize(
    ("args", "env", "config", "message"),
    [
        (["--retrieve", "1"], {}, "", "--retrieve must be 0 (off) or a whole number from 2"),
        ([], {"TOOLCALL_RETRIEVE": "six"}, "", "$TOOLCALL_RETRIEVE must be a whole number"),
        ([], {}, "[retrieval]\nretriever = 'magic'\n", "[retrieval] retriever must be one of"),
        ([], {}, "[retrieval]\nk = 3\n", "unknown retrieval setting(s) k"),
        (["--retriever", "embed"], {}, "", "--retriever embed needs --embed-url"),
        (
            ["--retriever", "embed", "--embed-url", "http://127.0.0.1:9/v1"],
            {},
            "",
            "--retriever embed needs --embed-model",
        ),
    ],
)
def test_bad_retrieval_settings_are_one_line_and_exit_2(
    tmp_path: Path, args: list[str], env: dict[str, str], config: str, message: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(config)
    done = toolcall(
        "run", "--no-trace", *args, "weather in Paris",
        cwd=tmp_path, env={"TOOLCALL_CONFIG": str(path), **env},
    )  # fmt: skip
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_config_and_environment_turn_retrieval_on(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[retrieval]\nretrieve = 3\n")
    done = toolcall(
        "run", "--no-trace", "weather in Paris",
        cwd=tmp_path, env={"TOOLCALL_CONFIG": str(path)},
    )  # fmt: skip
    assert "sent 3 of 4 tools (lexical): get_weather" in done.stdout
    done = toolcall(
        "run", "--no-trace", "weather in Paris",
        cwd=tmp_path, env={"TOOLCALL_CONFIG": str(path), "TOOLCALL_RETRIEVE": "0"},
    )  # fmt: skip
    assert done.returncode == 0 and "sent " not in done.stdout


def test_tools_rank_shows_why_a_tool_ranks_first(tmp_path: Path) -> None:
    done = toolcall("tools", "--rank", "北京明天会下雨吗", "--top", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("query terms: ") and "rain" in lines[0]
    assert len(lines) == 3 and "get_weather  [" in lines[1] and "weather" in lines[1]


def test_the_header_of_a_session_of_many_tools_names_a_few_and_counts_the_rest() -> None:
    # 200 names would open the view with a screenful; each request's tools are shown apart.
    names = tuple(
        f"tool_{word}"
        for word in [
            "alpha",
            "beta",
            "gamma",
            "delta",
            "epsilon",
            "zeta",
            "eta",
            "theta",
            "iota",
            "kappa",
            "lambda",
            "mu",
            "nu",
            "xi",
            "omicron",
            "pi",
            "rho",
            "sigma",
            "tau",
            "upsilon",
        ]
    )
    out = io.StringIO()
    renderer = PlainRenderer(out)
    renderer.handle(RunStarted(question="q", model="m", strategy="regex", tools=names))
    header = out.getvalue().splitlines()[0]
    assert "tool_kappa" in header
    assert "tool_mu" in header and "tool_nu" not in header
    assert header.endswith("… 8 more (20 in all)")


def test_a_run_ranks_once_and_asks_the_embeddings_endpoint_once_for_its_question(
    many_registry: ToolRegistry,
) -> None:
    asked: list[list[str]] = []
    client = EmbeddingClient(
        "http://127.0.0.1:9/v1", "emb", "sk-test-key-1234", transport=fake_embeddings(asked)
    )
    call = {"name": "get_weather", "arguments": {"city": "Oslo"}}
    model = ScriptedModel([{"tool_calls": [call]}, "done"])
    ranker = EmbedRanker(client, "emb")
    events = ask("weather in Oslo", many_registry, model, strategy="schema", ranker=ranker)
    assert len(chosen(events)) == 2  # two requests, one ranking
    assert asked[1:] == [["weather in Oslo"]]  # the tools once, then the question once
