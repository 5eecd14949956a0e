"""The listing commands: ``hooks``, ``plugins``, ``engines``, ``config``."""

from __future__ import annotations

from typing import Any

import click

from hermes_core.cli.app import CliState, cli, emit_json, emit_table, fail, guarded
from hermes_core.errors import ConfigError, HermesPluginError
from hermes_core.host import CORE_DISTRIBUTION
from hermes_core.host_engines import DISPATCH_PLUGIN


def _summary(doc: str) -> str:
    return doc.strip().splitlines()[0] if doc.strip() else ""


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="JSON: [{name, area, mode, args, doc, impls: [{plugin, wrapper, tryfirst, trylast}]}].")
@click.option("--unimplemented", is_flag=True, help="Only hooks nobody implements.")
@click.pass_obj
@guarded
def hooks(state: CliState, as_json: bool, unimplemented: bool) -> None:
    """List every hook spec, in call order, with the plugins implementing it."""
    infos = state.host.hooks()
    if unimplemented:
        infos = [h for h in infos if not h.impls]
    if as_json:
        emit_json([
            {
                "name": h.name,
                "area": h.area,
                "mode": h.mode,
                "args": list(h.args),
                "doc": h.doc,
                "impls": [
                    {"plugin": i.plugin, "wrapper": i.wrapper, "tryfirst": i.tryfirst, "trylast": i.trylast}
                    for i in h.impls
                ],
            }
            for h in infos
        ])
        return
    width = max((len(h.name) for h in infos), default=4)
    # Column names are the JSON keys, upper-cased (impls in call order).
    click.echo(f"{'NAME':<{width}}  {'MODE':<11}  IMPLS")
    for h in infos:
        impls = ", ".join(i.plugin + _impl_flag(i) for i in h.impls) or "-"
        click.echo(f"{h.name:<{width}}  {h.mode:<11}  {impls}".rstrip())
        # The summary goes under each hook so the listing explains itself; -v adds the args.
        click.echo(f"{'':<{width}}    {_summary(h.doc)}")
        if state.verbosity:
            click.echo(f"{'':<{width}}    args: {', '.join(h.args) or '-'}")


def _impl_flag(impl: Any) -> str:
    if impl.wrapper:
        return " [wrapper]"
    if impl.tryfirst:
        return " [tryfirst]"
    return " [trylast]" if impl.trylast else ""


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="JSON: [{name, distribution, version, status, module, hooks, error}].")
@click.option("--third-party", is_flag=True, help="Hide hermes-core's own plugins.")
@click.pass_obj
@guarded
def plugins(state: CliState, as_json: bool, third_party: bool) -> None:
    """List every plugin: active, blocked or failed, with the hooks it implements.

    The table's columns are the JSON keys (MODULE with -v; ERROR when a plugin has one, its
    first line unless -v).
    """
    records = [r for r in state.host.plugins() if r.name != DISPATCH_PLUGIN]
    if third_party:
        records = [r for r in records if r.distribution != CORE_DISTRIBUTION]
    if as_json:
        emit_json([
            {
                "name": r.name,
                "distribution": r.distribution,
                "version": r.version,
                "status": r.status,
                "module": r.module,
                "hooks": list(r.hooks),
                "error": r.error,
            }
            for r in records
        ])
        return
    headers = ["NAME", "DISTRIBUTION", "VERSION", "STATUS", "HOOKS"]
    if state.verbosity:
        headers.insert(4, "MODULE")
    with_errors = any(r.error for r in records)
    if with_errors:
        headers.append("ERROR")
    rows = []
    for r in records:
        row = [r.name, r.distribution, r.version, r.status, " ".join(r.hooks) or "-"]
        if state.verbosity:
            row.insert(4, r.module)
        if with_errors:
            error = r.error or ""
            if error and not state.verbosity:
                first = error.splitlines()[0]
                error = first[:100] + ("... (-v for all)" if len(first) > 100 or "\n" in error else "")
            row.append(error or "-")
        rows.append(row)
    emit_table(headers, rows)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="JSON: [{name, plugin, distribution, version, selected, default}].")
@click.pass_obj
@guarded
def engines(state: CliState, as_json: bool) -> None:
    """List the context engines plugins provide, and which one config selects."""
    config = state.config
    selected = config.context.engine
    specs = state.host.context_engines()
    rows = [
        {
            "name": spec.name,
            "plugin": spec.plugin,
            "distribution": spec.distribution,
            "version": spec.version,
            "selected": spec.name == selected,
            "default": spec.name == "compressor",
        }
        for spec in sorted(specs.values(), key=lambda s: s.name)
    ]
    if as_json:
        emit_json(rows)
    else:
        emit_table(
            ["NAME", "PLUGIN", "DISTRIBUTION", "VERSION", "SELECTED", "DEFAULT"],
            [
                [r["name"], r["plugin"], r["distribution"], r["version"] or "-",
                 "*" if r["selected"] else "", "*" if r["default"] else ""]
                for r in rows
            ],
        )
    if selected not in specs:
        where = f" (in {config.path})" if config.path else ""
        fail(
            f"context.engine: unknown engine {selected!r}{where}; available engines: "
            + (", ".join(sorted(specs)) or "(none)")
        )


@cli.command(name="config")
@click.option("--json", "as_json", is_flag=True,
              help="JSON: {path, model_data: {refreshed, sources, models}, values: [{key, value, source, owner}]}.")
@click.pass_obj
@guarded
def config_cmd(state: CliState, as_json: bool) -> None:
    """Print the effective configuration, where each value came from and who owns each key
    (``hermes-core`` or the plugin that declares it), and the date of the model-data snapshot
    (context windows and prices of known models)."""
    from hermes_core.model_data import snapshot_info

    config = state.config
    rows = [(k, v, s, config.owner(k)) for k, v, s in config.items()]
    models = snapshot_info()
    if as_json:
        emit_json({
            "path": config.path,
            "model_data": models,
            "values": [{"key": k, "value": _plain(v), "source": s, "owner": o} for k, v, s, o in rows],
        })
        return
    sources = ", ".join(f"{name} {ver}" for name, ver in sorted(models["sources"].items()))
    click.echo(f"# config file: {config.path or '(none; defaults)'}; model data refreshed "
               f"{models['refreshed']} ({models['models']} models from {sources})")
    emit_table(["KEY", "VALUE", "SOURCE", "OWNER"], [[k, _show(v), s, o] for k, v, s, o in rows])


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    if hasattr(value, "items") and not isinstance(value, dict):
        return dict(value)
    return value


def _show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {v}" for k, v in value.items()) + "}"
    return str(value)


__all__ = ["ConfigError", "HermesPluginError"]
