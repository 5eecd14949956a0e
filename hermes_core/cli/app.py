"""The ``hermes-ctx`` group, its state and output helpers (the subcommand modules import these;
``hermes_core.cli`` re-exports them and registers the subcommands).

Data goes to stdout (a table, or JSON with ``--json``), logs to stderr. Bad configuration exits
with code 2 and a one-line error, never a traceback. Plugins add subcommands through
``hermes_cli_register_commands``; those are resolved with the same host (so ``--disable`` and
``--home`` apply to them too).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import attrs
import click

from hermes_core import __version__
from hermes_core.config import Config, load_config, resolve_home
from hermes_core.diagnostics import collecting
from hermes_core.errors import ConfigError, HermesError, HermesPluginError
from hermes_core.host import PluginHost
from hermes_core.logging import configure_logging


@attrs.define(kw_only=True)
class CliState:
    """What the group's options say; the host and config are built on first use."""

    home: str | None = None
    config_path: str | None = None
    disable: tuple[str, ...] = ()
    strict: bool = False
    trace: bool = False
    verbosity: int = 0
    _config: Config | None = None
    _host: PluginHost | None = None
    warnings: list[Any] = attrs.field(factory=list)

    @property
    def home_path(self) -> Path:
        return resolve_home(self.home)

    @property
    def config(self) -> Config:
        if self._config is None:
            flags: dict[str, Any] = {}
            if self.disable:
                flags["plugins.disabled"] = self.disable
            with collecting() as bucket:
                try:
                    self._config = load_config(home=self.home, path=self.config_path, flags=flags)
                except RecursionError:
                    raise ConfigError("the configuration is nested too deeply to read") from None
                except SystemExit as exc:
                    # Something called sys.exit() while the config was read: a reason, not a
                    # silent exit with its status.
                    raise ConfigError(f"reading the configuration called sys.exit({exc.code!r})") from None
            self.warnings.extend(bucket)
        return self._config

    @property
    def host(self) -> PluginHost:
        if self._host is None:
            config = self.config
            with collecting() as bucket:
                self._host = PluginHost.create(
                    config=config, strict=self.strict or None, trace=self.trace or None
                )
            self.warnings.extend(bucket)
        return self._host


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``message`` to stderr and exit with ``code`` (no traceback)."""
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn hermes-core errors into a one-line message and exit code 2."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (ConfigError, HermesPluginError, HermesError) as exc:
            fail(str(exc))

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def emit_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[str(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row[:-1]):
            widths[i] = max(widths[i], len(cell))
    fmt = "  ".join(f"{{:<{w}}}" for w in widths[:-1]) + "  {}"
    click.echo(fmt.format(*headers).rstrip())
    for row in cells:
        click.echo(fmt.format(*row).rstrip())


class PluginAwareGroup(click.Group):
    """A click group that asks plugins for the subcommands it does not know itself."""

    def _plugin_commands(self, ctx: click.Context) -> dict[str, click.Command]:
        state = ctx.find_object(CliState)
        if state is None:
            # click resolves the subcommand before the group callback runs: build the state
            # from the group's parsed options now (the callback reuses it).
            state = _state_from_params(ctx.params)
            if state is None:
                return {}
            ctx.obj = state
        extra = click.Group(name="plugins")
        try:
            state.host.cli_commands(extra)
        except (ConfigError, HermesPluginError):
            return {}
        return {name: cmd for name, cmd in extra.commands.items() if name not in self.commands}

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        return self._plugin_commands(ctx).get(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = set(super().list_commands(ctx))
        names.update(self._plugin_commands(ctx))
        return sorted(names)


def _state_from_params(params: dict[str, Any]) -> CliState | None:
    if "disable" not in params:
        return None
    verbose = int(params.get("verbose") or 0)
    configure_logging(verbosity=max(verbose, 2 if params.get("trace_hooks") else 0),
                      log_format=params.get("log_format"))
    return CliState(
        home=params.get("home"), config_path=params.get("config_path"),
        disable=tuple(params.get("disable") or ()), strict=bool(params.get("strict_plugins")),
        trace=bool(params.get("trace_hooks")), verbosity=int(params.get("verbose") or 0),
    )


@click.group(cls=PluginAwareGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hermes-ctx")
@click.option("--home", type=click.Path(file_okay=False), help="HERMES_HOME (default: $HERMES_HOME or ~/.hermes).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Config file (default: <home>/config.yaml).")
@click.option("--disable", multiple=True, metavar="NAME", help="Block a plugin by name (repeatable).")
@click.option("--strict-plugins", is_flag=True, help="Fail on any plugin error instead of reporting it.")
@click.option("--trace-hooks", is_flag=True, help="Log every hook call and return (debug level).")
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-v info, -vv debug).")
@click.option("--log-format", type=click.Choice(["console", "json"]), default=None, help="Log renderer on stderr.")
@click.pass_context
def cli(
    ctx: click.Context,
    home: str | None,
    config_path: str | None,
    disable: tuple[str, ...],
    strict_plugins: bool,
    trace_hooks: bool,
    verbose: int,
    log_format: str | None,
) -> None:
    """Inspect and drive hermes-core: hooks, plugins, engines, prompts and compression."""
    configure_logging(verbosity=max(verbose, 2 if trace_hooks else 0), log_format=log_format)  # type: ignore[arg-type]
    if isinstance(ctx.obj, CliState):  # built while resolving a plugin's subcommand
        return
    ctx.obj = CliState(
        home=home, config_path=config_path, disable=disable, strict=strict_plugins,
        trace=trace_hooks, verbosity=verbose,
    )


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="hermes-ctx")

