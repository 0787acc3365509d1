"""`toolcall drill`: the interviewer's follow-up questions, one by one (the drill itself is in
cli/_drilling.py, imported when the command runs: its questions are many)."""

from __future__ import annotations

from typing import Annotated

import typer

from toolcall_cli.cli._options import Language, PanelledCommand, choices_metavar
from toolcall_cli.cli.entry import app, fail


@app.command(cls=PanelledCommand)
def drill(
    topic: Annotated[
        str | None,
        typer.Option("--topic", metavar="TOPIC", help="Drill this topic only (see --list)."),
    ] = None,
    lang: Annotated[
        Language | None,
        typer.Option(
            "--lang",
            metavar=choices_metavar(Language),
            help="The questions' language (default: the locale's, else en).",
        ),
    ] = None,
    list_topics: Annotated[bool, typer.Option("--list", help="List the topics.")] = False,
) -> None:
    """The interviewer's follow-up questions after "hand-write a tool use", one by one: type
    your answer, watch the offline model show the fault or limit it is about, then mark your
    answer against the points a strong one covers (y/n each) for a score.

    Piped, stdin gives the answers and marks, one a line; an empty line ends an answer (or skips
    it when it comes first).
    """
    from toolcall_cli.cli._drilling import answer_input, locale_lang, run_drill
    from toolcall_cli.drill import TOPICS, Lang, UnknownTopic, find_topic

    chosen: Lang = locale_lang() if lang is None else lang
    if list_topics:
        width = max(len(one.name) for one in TOPICS)
        for one in TOPICS:
            typer.echo(f"{one.name:<{width}}  {one.question.in_lang(chosen)}")
        return
    try:
        topics = [find_topic(topic)] if topic is not None else list(TOPICS)
    except UnknownTopic as error:
        fail(str(error))
    run_drill(topics, answer_input(), chosen)
