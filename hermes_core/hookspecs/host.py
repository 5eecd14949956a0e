"""Hooks about the plugin host itself: readiness, configuration sections and CLI extension."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_core.hookspecs.markers import hookspec

if TYPE_CHECKING:
    from collections.abc import Sequence

    import click

    from hermes_core.config import ConfigSection


class HostSpecs:
    # ``host`` is the ``PluginHost``, which is built on these specs: not named here. Any, not a
    # Protocol: pluggy matches implementations by argument name only, so a type checks nothing.
    @hookspec(historic=True)
    def hermes_plugin_host_ready(self, host: Any) -> None:
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
        """Declare the ``config.yaml`` keys this plugin reads (it owns them).

        Called: once per host, when a configuration is bound to it (``Session.open``, every CLI
        command), by the configuration reference generator, and, for a disabled plugin, only
        when a key is otherwise unknown (the function is called without registering the plugin).

        Args:
            (none)

        Returns:
            One ``ConfigSection`` or a sequence of them; ``None`` to declare nothing. ``model``
            is a frozen attrs class whose defaults are the keys' defaults (fields made with
            ``hermes_core.plugin.field(default, check, doc=...)`` get their values checked and
            documented); ``name`` says where its fields live: a top-level name of the plugin's
            own (``acme`` -> ``acme.<field>``), a core section the plugin adds keys to
            (``agent`` -> ``agent.<field>``) or ``""`` (top-level keys); ``env`` maps
            environment variables to the keys they override; ``doc`` describes them.

        Semantics: collect; every implementation is called. Every built-in declares its keys
        this way; the core's own model holds only what the core reads. The values are read
        from the same file mapping as the core's (the file is read once) and reached with
        ``config.section(DECLARATION)`` (also ``config.<name>`` for a section of its own);
        ``hermes-ctx config`` lists them with their owner and ``docs/configuration.md``
        documents the built-ins'. A key neither the core nor a loaded plugin declares draws
        one unknown-key warning; a disabled plugin's keys are accepted silently. A declaration
        claiming a key the core or another plugin owns, or naming an environment variable for
        a key it does not declare, is refused with a ``config_section_refused`` warning.

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
