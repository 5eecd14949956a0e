"""The pip-installed distribution shows in `hermes-ctx engines` and config selects it."""

import json
import subprocess
import sys

from click.testing import CliRunner

from hermes_core.cli import cli


def test_listed_and_selected_from_config(tmp_path):
    (tmp_path / "config.yaml").write_text("context:\n  engine: window\n")
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "engines", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["window"] == {
        "name": "window", "plugin": "window_engine", "distribution": "hermes-engine-window",
        "version": "0.1.0", "selected": True, "default": False,
    }
    assert rows["compressor"]["selected"] is False


def test_console_script_sees_it():
    out = subprocess.run(
        [sys.executable, "-m", "hermes_core.cli", "engines", "--json"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "hermes-engine-window" in out.stdout


def test_marker_says_what_was_dropped():
    from hermes_engine_window import WindowEngine

    from hermes_core.plugin import Config
    from hermes_core.testing.conformance import long_history

    engine = WindowEngine(config=Config())
    engine.update_model("m", 20_000)
    out = engine.compress(long_history(40, 2_000))
    marker = next(m for m in out if "_window_dropped" in m)
    assert f"{marker['_window_dropped']} earlier messages" in marker["content"]
