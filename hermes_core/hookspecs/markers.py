"""The pluggy project name and its two markers; a leaf module so the spec modules can import
them without importing the package that imports them."""

from __future__ import annotations

import pluggy

PROJECT = "hermes"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
