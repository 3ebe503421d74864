"""Market-filter values from files and NAME=VALUE options, each checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from pastcast.markets import (
    FilterConfig,
    filter_config,
    parse_filter_assignments,
    read_filter_file,
)


def test_toml_json_and_options_apply_in_order(tmp_path: Path) -> None:
    (tmp_path / "f.toml").write_text("[filters]\nmin_lifetime_days = 14\nclip = 0.001\n")
    (tmp_path / "f.json").write_text('{"min_trades": 3}')
    cfg = filter_config(read_filter_file(tmp_path / "f.toml"), where="f.toml")
    cfg = filter_config(read_filter_file(tmp_path / "f.json"), where="f.json", base=cfg)
    cfg = filter_config(parse_filter_assignments(["max-unfaithful-run=2"]), where="x", base=cfg)
    assert cfg == FilterConfig(min_lifetime_days=14, clip=0.001, min_trades=3, max_unfaithful_run=2)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no filter values"),
        ("# only a comment\n", "no filter values"),
        ("[other]\nx = 1\n", "unknown filter 'other'"),
        ("min_trades = [\n", "not valid TOML"),
    ],
)
def test_bad_files_name_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "f.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as err:
        filter_config(read_filter_file(path), where=str(path))
    assert str(path) in str(err.value)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"min_trades": 1.5}, "field min_trades: expected an integer"),
        ({"min_volume": "nan"}, "field min_volume: must be a finite number >= 0"),
        ({"min_faithful_fraction": 2}, "a fraction in \\[0, 1\\]"),
        ({"clip": 0.7}, "must be in \\(0, 0.5\\)"),
        ({"min_trades": True}, "expected a number"),
    ],
)
def test_bad_values_name_the_field(values: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        filter_config(values, where="--filter")
