"""Hooks about the plugin host itself: readiness, configuration sections and CLI extension."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_core.hookspecs.markers import hookspec

if TYPE_CHECKING:
    from collections.abc import Sequence

    import click

    from hermes_core.config import ConfigSection
    from hermes_core.host import PluginHost


class HostSpecs:
    @hookspec(historic=True)
    def hermes_plugin_host_ready(self, host: PluginHost) -> None:
        """Announce that the host has loaded every plugin.

        Called: once per host, after entry points are loaded and ``check_pending`` passed;
        historic, so a plugin registered later still receives it at registration.

        Args:
            host: the ``PluginHost`` that finished loading.

        Returns:
            Nothing; return values are ignored.

        Semantics: historic announcement; every implementation is called.

        .. versionadded:: 0.1
        """

    @hookspec
    def hermes_config_sections(self) -> ConfigSection[Any] | Sequence[ConfigSection[Any]] | None:
        """Declare the top-level ``config.yaml`` sections this plugin owns.

        Called: once per host, when a configuration is read for it (``Session.open``, every CLI
        command) and by the configuration reference generator.

        Args:
            (none)

        Returns:
            One ``ConfigSection`` or a sequence of them: ``name`` (the top-level key), ``model``
            (a frozen attrs class whose defaults are the section's defaults; fields made with
            ``hermes_core.config.field(default, check, doc=...)`` get their values checked and
            documented) and ``doc``; ``None`` to declare nothing.

        Semantics: collect; every implementation is called. The values are read from the file
        into ``model`` and reached as ``config.<name>.<key>`` (``ctx.config`` in every hook);
        ``hermes-ctx config`` lists them and ``docs/configuration.md`` documents the built-ins'.
        Only keys no plugin declared draw an unknown-key warning. A name the core or another
        plugin already owns is refused with a warning naming both.

        Example:
            ``@hookimpl def hermes_config_sections(): return ConfigSection(name="acme",
            model=AcmeSettings, doc="Acme's search backend")``

        .. versionadded:: 0.1
        """

    @hookspec
    def hermes_cli_register_commands(self, cli: click.Group) -> Any:
        """Add subcommands to the ``hermes-ctx`` click group.

        Called: once per CLI invocation, when the group resolves a subcommand name it does not
        know itself (so plugin commands honour ``--disable`` and ``--home``).

        Args:
            cli: the ``hermes-ctx`` click group; call ``cli.add_command(...)``.

        Returns:
            Nothing; return values are ignored.

        Semantics: collect; every implementation is called. A command name that already exists
        is left alone and a warning names the plugin.

        Example:
            ``@hookimpl def hermes_cli_register_commands(cli): cli.add_command(my_cmd)``

        .. versionadded:: 0.1
        """
