"""The environment block: facts about the machine the tools run on (spec §7).

A local backend describes this host (OS, home, working directory). A remote backend (docker,
ssh, modal, daytona, singularity, ...) suppresses host facts - they would be about the wrong
machine - and instead runs one probe command inside the backend through the runner a plugin
provides (``hermes_environment_runner``). The probe costs up to 4 seconds, so its result is
cached per (backend, cwd) for the life of the process, failures included.
"""

from __future__ import annotations

import os
import platform as _platform
import threading
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from hermes_core.plugin import ConfigSection, PromptBlock, PromptContext, field, hookimpl, record_warning, string
from hermes_plugins._common.terminal import TERMINAL, terminal_backend

PROBE_TIMEOUT = 4.0
REMOTE_TOOLS = "terminal, read_file, write_file, patch and search_files"
#: What a failed probe falls back to saying about each known backend.
BACKEND_DESCRIPTIONS: Mapping[str, str] = {
    "docker": "a Docker container (Linux)",
    "singularity": "a Singularity container (Linux)",
    "modal": "a Modal sandbox (Linux)",
    "managed_modal": "a managed Modal sandbox (Linux)",
    "daytona": "a Daytona workspace (Linux)",
    "ssh": "a remote machine reached over SSH (likely Linux)",
    "vercel_sandbox": "a Vercel sandbox (Linux)",
}
LOCAL_BACKENDS = frozenset({"", "local"})

# One line per fact, key=value; `whoami` may be missing in slim images, hence the fallbacks.
PROBE_COMMAND = (
    'echo "os=$(uname -s 2>/dev/null || echo unknown)"; '
    'echo "kernel=$(uname -r 2>/dev/null || echo unknown)"; '
    'echo "home=${HOME:-unknown}"; '
    'echo "cwd=$(pwd 2>/dev/null || echo unknown)"; '
    'echo "user=$(whoami 2>/dev/null || id -un 2>/dev/null || echo unknown)"'
)

WINDOWS_HOSTNAME_NOTE = (
    "Note: on Windows the machine's hostname is not the user's name; read the user name from "
    "the home directory above."
)
WINDOWS_BASH_HINT = (
    "The terminal tool runs commands in bash (Git Bash / MSYS), not PowerShell or cmd: use "
    "POSIX shell syntax and forward slashes, and reach Windows drives as /c/..., /d/...."
)
WSL_HINT = (
    "This host is Linux running under WSL. The Windows drives are mounted under /mnt (C: is "
    "/mnt/c); prefer the Linux file system for project work, it is much faster."
)


class ProbeCache:
    """Probe results of one plugin host by (backend, cwd), and a lock per key so that sessions
    building at once wait for one probe (``host.state(ProbeCache)``)."""

    __slots__ = ("key_locks", "lock", "results")

    def __init__(self) -> None:
        self.results: dict[tuple[str, str], str] = {}
        self.lock = threading.Lock()
        self.key_locks: dict[tuple[str, str], threading.Lock] = {}

    def clear(self) -> None:
        """Forget every result (a backend that was rebuilt)."""
        with self.lock:
            self.results.clear()
            self.key_locks.clear()


# --- local ------------------------------------------------------------------------------


def is_wsl(system: str, release: str, env: Mapping[str, str]) -> bool:
    return system == "Linux" and ("microsoft" in release.lower() or bool(env.get("WSL_DISTRO_NAME")))


def describe_host(system: str, release: str, *, mac_version: str = "", wsl: bool = False) -> str:
    """The ``Host:`` value for a platform as ``platform.system()``/``release()`` name it."""
    if wsl:
        return "WSL (Windows Subsystem for Linux)"
    if system == "Windows":
        return f"Windows ({release})"
    if system == "Darwin":
        return f"macOS ({mac_version or release})"
    return f"{system or 'unknown'} ({release or 'unknown'})"


def local_environment(
    ctx: PromptContext,
    *,
    system: str | None = None,
    release: str | None = None,
    mac_version: str | None = None,
) -> list[str]:
    """The local backend's blocks; the platform facts are arguments so every branch is testable."""
    system = _platform.system() if system is None else system
    release = _platform.release() if release is None else release
    if mac_version is None:
        mac_version = _platform.mac_ver()[0] if system == "Darwin" else ""
    wsl = is_wsl(system, release, ctx.env)
    home = ctx.env.get("USERPROFILE" if system == "Windows" else "HOME") or os.path.expanduser("~")
    lines = [
        f"Host: {describe_host(system, release, mac_version=mac_version, wsl=wsl)}",
        f"User home directory: {home}",
    ]
    try:
        lines.append(f"Current working directory: {os.fspath(ctx.cwd)}")
    except (OSError, TypeError):
        pass
    if system == "Windows":
        lines.append(WINDOWS_HOSTNAME_NOTE)
    blocks = ["\n".join(lines)]
    if system == "Windows":
        blocks.append(WINDOWS_BASH_HINT)
    if wsl:
        blocks.append(WSL_HINT)
    return blocks


# --- remote -----------------------------------------------------------------------------


def _run_with_timeout(runner: Callable[[str, float], Any], timeout: float) -> str:
    # A runner may ignore its timeout argument; the thread join enforces it regardless.
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["out"] = runner(PROBE_COMMAND, timeout)
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="hermes-env-probe", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise TimeoutError(f"the probe did not finish within {timeout:g} s")
    if "error" in outcome:
        raise outcome["error"]
    out = outcome.get("out")
    if isinstance(out, bytes):
        out = out.decode("utf-8", errors="replace")
    if not isinstance(out, str):
        raise TypeError(f"the runner returned {type(out).__name__}, not text")
    return out


def parse_probe(output: str) -> dict[str, str]:
    facts: dict[str, str] = {}
    for line in output.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() in {"os", "kernel", "home", "cwd", "user"}:
            facts[key.strip()] = value.strip()
    return facts


def render_probe(facts: Mapping[str, str]) -> str:
    """Indented fact lines; ``unknown`` parts are dropped. Empty when nothing useful came back."""

    def known(value: str | None) -> str:
        return "" if not value or value == "unknown" else value

    lines: list[str] = []
    os_text = " ".join(part for part in (known(facts.get("os")), known(facts.get("kernel"))) if part)
    if os_text:
        lines.append(f"  OS: {os_text}")
    for key, label in (("user", "User"), ("home", "Home"), ("cwd", "Working directory")):
        if known(facts.get(key)):
            lines.append(f"  {label}: {facts[key]}")
    return "\n".join(lines)


def probe_backend(ctx: PromptContext, backend: str) -> str | None:
    """The rendered probe lines for ``backend``; ``""`` for a failed probe; ``None`` without a runner.

    Results and failures are cached per (backend, cwd) by the plugin host that provides the
    runner; "no runner" is not cached.
    """
    if ctx.host is None:
        return None  # the runner comes from a host's plugins
    cache: ProbeCache = ctx.host.state(ProbeCache)  # ctx.host is typed Any (records sit below the host)
    cwd = ctx.config.terminal.cwd or os.fspath(ctx.cwd)
    key = (backend, cwd)
    with cache.lock:
        if key in cache.results:
            return cache.results[key]
        key_lock = cache.key_locks.setdefault(key, threading.Lock())
    # One probe per key even when several sessions build at once: the others wait for it.
    with key_lock:
        with cache.lock:
            if key in cache.results:
                return cache.results[key]
        runner = ctx.host.environment_runner(backend)
        if runner is None:
            return None
        rendered = _probe(runner, backend)
        with cache.lock:
            cache.results[key] = rendered
        return rendered


def _probe(runner: Callable[[str, float], Any], backend: str) -> str:
    try:
        rendered = render_probe(parse_probe(_run_with_timeout(runner, PROBE_TIMEOUT)))
        if not rendered:
            raise ValueError("the probe printed none of os/kernel/home/cwd/user")
    except Exception as exc:  # noqa: BLE001 - a dead backend costs its facts, not the prompt
        record_warning(
            "environment_probe_failed",
            f"could not probe the {backend} backend: {type(exc).__name__}: {exc}; "
            "the prompt says its user, home and working directory are unknown",
            plugin="environment",
            backend=backend,
        )
        rendered = ""
    return rendered


def remote_environment(ctx: PromptContext, backend: str) -> list[str]:
    intro = (
        f"Terminal backend: {backend}. The {REMOTE_TOOLS} tools run inside this environment, not "
        "on the machine that hosts the agent; paths and commands refer to it."
    )
    probed = probe_backend(ctx, backend)
    if probed:
        return [intro + "\n" + probed]
    description = BACKEND_DESCRIPTIONS.get(backend, f"a {backend} environment (likely Linux)")
    return [
        intro + f"\nIt is {description}. Its user, home directory and working directory are "
        "unknown; check them with `uname -a && whoami && pwd` before relying on paths."
    ]


@attrs.frozen(kw_only=True)
class EnvironmentKeys:
    environment_hint: str | None = field(None, string(optional=True), doc="appended to the environment block")


ENVIRONMENT = ConfigSection(
    name="agent", model=EnvironmentKeys, doc="The embedder's own environment hint.",
    env={"HERMES_ENVIRONMENT_HINT": "agent.environment_hint"},
)


@hookimpl
def hermes_config_sections() -> list[ConfigSection[Any]]:
    return [ENVIRONMENT, TERMINAL]


@hookimpl(trylast=True)
def hermes_prompt_environment(ctx: PromptContext) -> PromptBlock:
    backend = terminal_backend(ctx)
    if backend in LOCAL_BACKENDS:
        blocks = local_environment(ctx)
    else:
        blocks = remote_environment(ctx, backend)
    # The embedder's own hint comes last so it can qualify everything above it.
    extra = (ctx.env.get("HERMES_ENVIRONMENT_HINT") or "").strip() or (
        ctx.config.section(ENVIRONMENT).environment_hint or ""
    ).strip()
    if extra:
        blocks.append(extra)
    return PromptBlock(name="environment", text="\n\n".join(blocks))


__all__ = [
    "PROBE_COMMAND",
    "PROBE_TIMEOUT",
    "ProbeCache",
    "describe_host",
    "hermes_prompt_environment",
]
