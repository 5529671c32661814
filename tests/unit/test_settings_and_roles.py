"""Settings and model roles: defaults, overrides, and errors that name what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from ducklm.config.settings import SettingsError, load_settings
from ducklm.models.roles import ROLE_NAMES, ModelsConfigError, load_roles


def test_defaults() -> None:
    settings = load_settings(env_file=None)
    assert settings.max_action_steps == 4
    assert settings.workspace == Path.cwd() / "workspace"
    assert settings.data_dir == Path.cwd() / "data"


def test_environment_and_dotenv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("DUCK_MAX_ACTION_STEPS=7\nDUCK_WORKSPACE=/srv/ws\n")
    monkeypatch.setenv("DUCK_MAX_ACTION_STEPS", "2")
    settings = load_settings(env_file=env_file)
    assert settings.max_action_steps == 2, "the environment wins over .env"
    assert settings.workspace == Path("/srv/ws")


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("DUCK_MAX_ACTION_STEPS", "lots", "DUCK_MAX_ACTION_STEPS: Input should be a valid integer"),
        ("DUCK_MAX_ACTION_STEPS", "0", "DUCK_MAX_ACTION_STEPS: Input should be greater than"),
        ("DUCK_CTX_SIZE", "-5", "DUCK_CTX_SIZE"),
        ("DUCK_MAX_INPUT_TOKENS", "999999", "DUCK_MAX_INPUT_TOKENS (999999) is larger than"),
    ],
)
def test_bad_values_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as err:
        load_settings(env_file=None)
    assert expected in str(err.value)


def test_packaged_roles_inherit_defaults() -> None:
    roles = load_roles()
    assert set(roles) == set(ROLE_NAMES)
    assert all(r.base_url == "http://127.0.0.1:8081/v1" for r in roles.values())
    assert roles["action"].tool_mode == "native"
    assert roles["action"].temperature == 0.0
    assert roles["thinker"].prompt == "thinker.md"


def test_base_url_override_and_per_role_server(tmp_path: Path) -> None:
    models = tmp_path / "models.yaml"
    models.write_text(
        "defaults: {base_url: http://a/v1, model: m}\n"
        "roles:\n  coder: {base_url: http://big/v1, model: coder-7b}\n"
    )
    roles = load_roles(models, base_url="http://override/v1", api_key="k")
    assert roles["thinker"].base_url == "http://override/v1"
    assert roles["thinker"].api_key == "k"
    assert (roles["coder"].base_url, roles["coder"].model) == ("http://big/v1", "coder-7b")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("defaults: {model: m}\nroles: {thinkr: {}}", "roles.thinkr"),
        ("defaults: {model: m, base_url: u}\nroles: {action: {tool_mode: smoke}}", "tool_mode"),
        ("defaults: {model: m, base_url: u, temprature: 1}", "defaults.temprature"),
        ("defaults: {model: m}", "role thinker has no base_url"),
        ("defaults: [unclosed", "cannot read models file"),
    ],
)
def test_bad_models_file_says_where(tmp_path: Path, text: str, expected: str) -> None:
    models = tmp_path / "models.yaml"
    models.write_text(text)
    with pytest.raises(ModelsConfigError, match=expected):
        load_roles(models)


def test_database_url_takes_postgres_only_and_never_echoes_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DUCK_DATABASE_URL", "mysql://duck:s3cret@db/duck")
    with pytest.raises(SettingsError) as err:
        load_settings(env_file=None)
    assert "DUCK_DATABASE_URL" in str(err.value) and "postgresql://" in str(err.value)
    assert "s3cret" not in str(err.value)
    url = "postgres://duck:s3cret@db:5432/duck"
    monkeypatch.setenv("DUCK_DATABASE_URL", url)
    settings = load_settings(env_file=None, data_dir=tmp_path)
    assert settings.database_location == settings.checkpoint_location == url
    monkeypatch.delenv("DUCK_DATABASE_URL")
    settings = load_settings(env_file=None, data_dir=tmp_path)
    assert settings.database_location == tmp_path / "ducklm.sqlite"
    assert settings.checkpoint_location == tmp_path / "checkpoints.sqlite"
