"""Where settings come from: flags > environment > config file > defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcall_cli.config import ConfigError, FileConfig, load_config, mask, resolve

KEY = {"OPENAI_API_KEY": "sk-openai-123456789"}


def test_defaults_are_the_offline_model_and_regex() -> None:
    resolved = resolve(flags={}, environ={})
    assert (resolved.model, resolved.strategy, resolved.base_url) == ("offline", "regex", None)


def test_flags_beat_environment_beat_config_beat_defaults(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[defaults]\nmodel = "from-config"\nstrategy = "schema"\n', encoding="utf-8")
    config = load_config(path)
    env = {"TOOLCALL_MODEL": "from-env"}
    assert resolve(flags={}, environ={}, config=config).model == "from-config"
    assert resolve(flags={}, environ=env, config=config).model == "from-env"
    assert resolve(flags={"model": "from-flag"}, environ=env, config=config).model == "from-flag"
    assert resolve(flags={}, environ={}, config=config).sources["strategy"] == "config"


def test_a_profile_supplies_url_key_variable_and_defaults() -> None:
    resolved = resolve(
        flags={"profile": "deepseek"}, environ={"DEEPSEEK_API_KEY": "sk-ds-123456789", **KEY}
    )
    assert resolved.base_url == "https://api.deepseek.com/v1" and resolved.model == "deepseek-chat"
    assert resolved.api_key == "sk-ds-123456789"  # never the OpenAI key


def test_the_openai_key_goes_only_to_openai_or_openai_base_url() -> None:
    elsewhere = resolve(flags={"model": "m", "base_url": "http://other.example/v1"}, environ=KEY)
    assert elsewhere.api_key is None
    openai = resolve(flags={"model": "m", "base_url": "https://api.openai.com/v1"}, environ=KEY)
    assert openai.api_key == KEY["OPENAI_API_KEY"]
    env_url = resolve(flags={"model": "m"}, environ={**KEY, "OPENAI_BASE_URL": "http://x/v1"})
    assert env_url.api_key == KEY["OPENAI_API_KEY"]
    given = resolve(flags={"model": "m", "base_url": "http://x/v1", "api_key": "k-1"}, environ=KEY)
    assert given.api_key == "k-1"


def test_a_user_profile_from_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        '[profiles.box]\nbase_url = "http://box:8000/v1"\nkey_env = "BOX_KEY"\nmodel = "q"\n',
        encoding="utf-8",
    )
    resolved = resolve(
        flags={"profile": "box"}, environ={"BOX_KEY": "b-123456789"}, config=load_config(path)
    )
    assert (resolved.base_url, resolved.model, resolved.api_key) == (
        "http://box:8000/v1",
        "q",
        "b-123456789",
    )


def test_unknown_profile_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"known profiles: .*ollama"):
        resolve(flags={"profile": "nope"}, environ={}, config=FileConfig())


def test_keys_are_masked() -> None:
    assert (
        mask("sk-abcdefgh1234") == "****1234"
        and mask(None) == "(not set)"
        and mask("short") == "****"
    )


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("key_env = 5", "key_env"),
        ('model = ["a"]', "model"),
        ("strategy = 1", "strategy"),
        ("note = {}", "note"),
        ('strategy = "bogus"', "strategy"),
        ('key_env = "sk-live-123456789"', "key_env"),
        ('key_env = ""', "key_env"),
    ],
)
def test_a_profile_value_that_cannot_work_names_profile_and_key(
    tmp_path: Path, line: str, key: str
) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f'[profiles.box]\nbase_url = "http://box/v1"\n{line}\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert "profile 'box'" in str(caught.value) and key in str(caught.value)
    assert "sk-live" not in str(caught.value)


def test_a_bad_profile_is_a_usage_error_before_anything_runs(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from toolcall_cli.cli import app

    path = tmp_path / "c.toml"
    path.write_text('[profiles.box]\nbase_url = "http://box/v1"\nkey_env = 5\n', encoding="utf-8")
    for args in (["run", "hi", "-p", "box"], ["config", "show"], ["run", "hi"]):
        result = CliRunner().invoke(app, args, env={"TOOLCALL_CONFIG": str(path)})
        assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr
        assert "profile 'box': key_env must be a string" in result.stderr


def test_a_config_base_url_without_a_model_is_the_same_usage_error_as_the_flag(
    tmp_path: Path,
) -> None:
    from fake_openai import Answer, FakeOpenAI, completion
    from typer.testing import CliRunner

    from toolcall_cli.cli import app

    def toolcall(config: str, *args: str) -> tuple[int, str, str]:
        path = tmp_path / "c.toml"
        path.write_text(config, encoding="utf-8")
        env = {"TOOLCALL_CONFIG": str(path)}
        result = CliRunner().invoke(app, ["run", "hi", "-q", *args], env=env)
        return result.exit_code, result.stdout, result.stderr

    with FakeOpenAI() as server:
        server.answers.append(Answer(json_body=completion("from the endpoint")))
        url_only = f'[defaults]\nbase_url = "{server.base_url}"\n'
        code, _, err = toolcall(url_only)
        assert code == 2 and "needs --model NAME" in err and err.count("\n") == 1
        flag = CliRunner().invoke(app, ["run", "hi", "--base-url", server.base_url])
        assert flag.exit_code == 2 and "needs --model NAME" in flag.stderr
        assert toolcall(url_only, "--model", "offline")[0] == 0  # a local model, chosen
        assert server.requests == []
        assert toolcall(url_only + 'model = "m"\n')[1].strip() == "from the endpoint"


def test_a_known_setting_in_the_wrong_table_is_told_where_it_goes(tmp_path: Path) -> None:
    """`max_iterations` in [defaults] was told "[limits] takes limits"; `temperature` nothing."""
    path = tmp_path / "config.toml"
    path.write_text("[defaults]\nmax_iterations = 8\ntemperature = 0\nretrieve = 3\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    told = str(caught.value)
    assert "; max_iterations goes in [limits]" in told
    assert "; retrieve goes in [retrieval]" in told
    assert "; temperature goes in a [profiles.NAME] table" in told
    assert "takes limits" not in told


def test_a_config_file_toolcall_config_names_must_exist_where_the_default_need_not(
    tmp_path: Path,
) -> None:
    """TOOLCALL_CONFIG=/nope ran with no config at all and said nothing."""
    from typer.testing import CliRunner

    from toolcall_cli.cli import app

    (tmp_path / "dangling").symlink_to(tmp_path / "gone.toml")
    for named, said in (
        (tmp_path / "nope.toml", "nope.toml (TOOLCALL_CONFIG) does not exist"),
        (tmp_path / "dangling", "dangling (TOOLCALL_CONFIG) is a link to nothing"),
        (tmp_path, "it is a directory"),
    ):
        for args in (["run", "hi", "-q", "--no-trace"], ["tools"]):
            result = CliRunner().invoke(app, args, env={"TOOLCALL_CONFIG": str(named)})
            assert result.exit_code == 2, (args, result.stdout)
            assert result.stderr.count("\n") == 1 and said in result.stderr, result.stderr
    # `config show` is where to look: it shows the file as missing (and the settings without it)
    shown = CliRunner().invoke(app, ["config", "show"], env={"TOOLCALL_CONFIG": "/nope.toml"})
    assert shown.exit_code == 0 and "config file: /nope.toml (not present)" in shown.stdout
    # No TOOLCALL_CONFIG, and no file where the default one would be: silent, as ever.
    env = {"TOOLCALL_CONFIG": "", "XDG_CONFIG_HOME": str(tmp_path / "none")}
    result = CliRunner().invoke(app, ["run", "hi", "-q", "--no-trace"], env=env)
    assert (result.exit_code, result.stderr) == (0, "")


def test_a_config_file_toolcall_config_names_from_the_home_folder_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TOOLCALL_CONFIG="~/work.toml" (a systemd unit, a quoted value: no shell expands it) was
    taken as a folder named `~`: since a file it names must exist, every run was refused."""
    from toolcall_cli.config import config_path, read_config

    (tmp_path / "work.toml").write_text('[defaults]\nmodel = "qwen"\n', encoding="utf-8")
    monkeypatch.setenv("HOME", str(tmp_path))
    environ = {"TOOLCALL_CONFIG": "~/work.toml"}
    assert config_path(environ) == tmp_path / "work.toml"
    assert read_config(environ).defaults["model"] == "qwen"
