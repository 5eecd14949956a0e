"""The ``hermes-ctx`` group, its state and output helpers (re-exported by ``hermes_core.cli``).

Data to stdout (a table, or JSON with ``--json``), logs to stderr; bad configuration exits 2
with a one-line error. Plugin subcommands (``hermes_cli_register_commands``) use the same host.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import attrs
import click

from hermes_core import __version__
from hermes_core.config import Config, load_config, resolve_home
from hermes_core.diagnostics import HostWarning, collecting
from hermes_core.errors import ConfigError, HermesError, HermesPluginError
from hermes_core.host import PluginHost
from hermes_core.logging import configure_logging
from hermes_core.redaction import redact_data, redact_text


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
    #: set by a command whose own output already carries the warnings (not printed again)
    warnings_shown: bool = False
    #: command name -> the plugin that added it (plugin subcommands only)
    provided_by: dict[str, str] = attrs.field(factory=dict)

    @property
    def home_path(self) -> Path:
        return resolve_home(self.home)

    @property
    def config(self) -> Config:
        if self._config is None:
            self.host  # noqa: B018 - builds the host, then reads the config with its sections
        assert self._config is not None
        return self._config

    def _load_config(self) -> Config:
        # Read once: the core's keys first (the host needs plugins.disabled), the plugins'
        # keys once the host knows its plugins (``host`` binds them).
        flags: dict[str, Any] = {}
        if self.disable:
            flags["plugins.disabled"] = self.disable
        try:
            return load_config(home=self.home, path=self.config_path, flags=flags)
        except RecursionError:
            raise ConfigError("the configuration is nested too deeply to read") from None
        except SystemExit as exc:
            # Something called sys.exit() while the config was read: a reason, not a
            # silent exit with its status.
            raise ConfigError(f"reading the configuration called sys.exit({exc.code!r})") from None

    @property
    def host(self) -> PluginHost:
        if self._host is None:
            with collecting() as bucket:
                config = self._load_config()
                self._host = PluginHost.create(
                    config=config, strict=self.strict or None, trace=self.trace or None
                )
                # Every command reports the configuration's warnings, whether it reads it or not.
                self._config = self._host.bind_config(config)
            self.warnings.extend(bucket)
        return self._host


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``message`` to stderr and exit with ``code`` (no traceback)."""
    click.echo(f"Error: {redact_text(message)}", err=True)
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


def emit_json(data: Any, *, redact: bool = False) -> None:
    """``data`` as indented JSON on stdout; ``redact``: every string with its secrets masked
    first (commands that print what a session held: history, cache-report, compress)."""
    click.echo(json.dumps(redact_data(data) if redact else data, indent=2, ensure_ascii=False, default=str))


def emit_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, redact: bool = False) -> None:
    cells = [[redact_text(str(c)) if redact else str(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row[:-1]):
            widths[i] = max(widths[i], len(cell))
    fmt = "  ".join(f"{{:<{w}}}" for w in widths[:-1]) + "  {}"
    click.echo(fmt.format(*headers).rstrip())
    for row in cells:
        click.echo(fmt.format(*row).rstrip())


#: Options of the group, by the number of values each takes (0 = a flag).
GLOBAL_OPTIONS: dict[str, int] = {
    "--home": 1, "--config": 1, "--disable": 1, "--log-format": 1,
    "--strict-plugins": 0, "--trace-hooks": 0, "--verbose": 0, "-v": 0,
}
#: The logger whose warning records the CLI prints itself, once, as ``warning: ...`` lines.
WARNINGS_LOGGER = "hermes_core.diagnostics"


def _env_flag(name: str) -> bool:
    return (os.environ.get(name) or "").strip().lower() in {"1", "true", "yes", "on"}


def _is_global(token: str, own: set[str]) -> tuple[bool, int]:
    name = token.split("=", 1)[0]
    if name in own:
        return False, 0
    if name in GLOBAL_OPTIONS:
        return True, 0 if "=" in token else GLOBAL_OPTIONS[name]
    # -vv, -vvv: counted verbosity
    if len(token) > 2 and token[0] == "-" and token[1] != "-" and set(token[1:]) == {"v"} and "-v" not in own:
        return True, 0
    return False, 0


def hoist_global_options(args: list[str], own_options: Callable[[str], set[str] | None]) -> list[str]:
    """Move group options written after the subcommand (``plugins -v --home X``) before it.

    ``own_options(name)`` gives the options the subcommand declares itself (those stay put) or
    ``None`` for an unknown command. Everything after ``--`` is left alone.
    """
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--" or not token.startswith("-"):
            break
        takes = _is_global(token, set())[1] if token.split("=", 1)[0] in GLOBAL_OPTIONS else 0
        i += 1 + takes
    if i >= len(args) or args[i] == "--":
        return args
    own = own_options(args[i])
    if own is None:
        return args
    head, command, rest = args[:i], args[i], args[i + 1:]
    hoisted: list[str] = []
    kept: list[str] = []
    j = 0
    while j < len(rest):
        token = rest[j]
        if token == "--":
            kept.extend(rest[j:])
            break
        is_global, takes = _is_global(token, own) if token.startswith("-") else (False, 0)
        if is_global:
            hoisted.extend(rest[j:j + 1 + takes])
            j += 1 + takes
        else:
            kept.append(token)
            j += 1
    return [*head, *hoisted, command, *kept]


def print_warnings(warnings: Iterable[HostWarning]) -> None:
    """Each warning once (by kind and message), on stderr."""
    seen: set[tuple[str, str]] = set()
    for warning in warnings:
        key = (getattr(warning, "kind", ""), getattr(warning, "message", str(warning)))
        if key in seen:
            continue
        seen.add(key)
        click.echo(f"warning: {redact_text(key[1])}", err=True)


class PluginAwareGroup(click.Group):
    """A click group that asks plugins for the subcommands it does not know itself."""

    def _plugin_commands(self, ctx: click.Context) -> dict[str, click.Command]:
        state = ctx.find_object(CliState)
        if state is None:
            # click resolves the subcommand before the group callback runs: build the state
            # from the group's parsed options now (the callback reuses it).
            state = _state_from_params(ctx.params)
            ctx.obj = state
        extra = click.Group(name="plugins")
        try:
            provided = state.host.cli_commands(extra)
        except (ConfigError, HermesPluginError):
            return {}
        state.provided_by.update(provided)
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

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Plugin commands say which plugin provides them.
        plugin_commands = self._plugin_commands(ctx)
        state = ctx.find_object(CliState)
        rows: list[tuple[str, str]] = []
        limit = formatter.width - 6 - max((len(n) for n in self.list_commands(ctx)), default=0)
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is None or cmd.hidden:
                continue
            prefix = ""
            if name in plugin_commands and state is not None:
                prefix = f"[plugin: {state.provided_by.get(name, '?')}] "
            text = prefix + cmd.get_short_help_str(limit=max(limit - len(prefix), 20))
            rows.append((name, text))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        def own_options(name: str) -> set[str] | None:
            command = click.Group.get_command(self, ctx, name)
            if command is None:
                # A plugin command: resolving it needs the group's options, which are not
                # parsed yet; hoist only what no plugin command can mean differently.
                return {"-v", "--verbose", "--config", "--home"}
            return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}

        return super().parse_args(ctx, hoist_global_options(list(args), own_options))

    def invoke(self, ctx: click.Context) -> Any:
        # Every warning recorded while the command runs is printed once, at the end, on stderr
        # (the log handler leaves those records out so they are not shown twice).
        with collecting() as bucket:
            try:
                return super().invoke(ctx)
            finally:
                state = ctx.find_object(CliState)
                if state is None or not state.warnings_shown:
                    print_warnings([*(state.warnings if state else ()), *bucket])


def _state_from_params(params: dict[str, Any]) -> CliState:
    # With --help (an eager option) the group's other options may not be parsed yet: their
    # defaults (and the environment) apply, so the help can still list plugin commands.
    verbose = int(params.get("verbose") or 0)
    trace = bool(params.get("trace_hooks")) or _env_flag("HERMES_TRACE_HOOKS")
    configure_logging(verbosity=max(verbose, 2 if trace else 0),
                      log_format=params.get("log_format"), shown_elsewhere=frozenset({WARNINGS_LOGGER}))
    return CliState(
        home=params.get("home"), config_path=params.get("config_path"),
        disable=tuple(params.get("disable") or ()), strict=bool(params.get("strict_plugins")),
        trace=trace, verbosity=verbose,
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
    """Inspect and drive hermes-core: hooks, plugins, engines, prompts and compression.

    Global options may also follow the subcommand (``hermes-ctx plugins -v``).
    """
    trace_hooks = trace_hooks or _env_flag("HERMES_TRACE_HOOKS")
    configure_logging(
        verbosity=max(verbose, 2 if trace_hooks else 0), log_format=log_format,  # type: ignore[arg-type]
        shown_elsewhere=frozenset({WARNINGS_LOGGER}),
    )
    if isinstance(ctx.obj, CliState):  # built while resolving a plugin's subcommand
        return
    ctx.obj = CliState(
        home=home, config_path=config_path, disable=disable, strict=strict_plugins,
        trace=trace_hooks, verbosity=verbose,
    )


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="hermes-ctx")

