"""Only the optional C extension lives here; everything else is in pyproject.toml.

``hermes_plugins.tools._dictver`` proves a plain-dict tool catalog unchanged from the dicts'
version tags (see its source and docs/tools.md "Performance"). It reads a CPython 3.11 struct
field, so it is built only there, and ``optional=True``: without a compiler (or on any other
interpreter) the install goes on and tool search keeps its pure-Python ``==`` proof.
"""

import sys

from setuptools import Extension, setup

ext_modules = []
if sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11):
    ext_modules.append(
        Extension(
            "hermes_plugins.tools._dictver",
            sources=["plugins/hermes_plugins/tools/_dictver.c"],
            optional=True,
        )
    )

setup(ext_modules=ext_modules)
