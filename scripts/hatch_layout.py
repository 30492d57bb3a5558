"""Hatch build hook: how the top-level code folders become the one package ``engramdb``.

Why a hook: the folders ``platform/``, ``ingestion/``, ``retrieval/`` and
``cypher/`` sit at the top of the checkout with no ``__init__.py`` above them,
so a Python started in the checkout never imports our ``platform/`` in place of
the standard library's. A regular wheel maps them under ``engramdb/`` (and
``platform/package_root.py`` becomes ``engramdb/__init__.py``). An editable
install must *not* copy them: it only adds ``.editable/`` to ``sys.path``
(``dev-mode-dirs``), where ``.editable/engramdb/`` is a committed farm of
symlinks back to the same folders, so an edited file takes effect on the next
run and IDEs and type checkers resolve ``engramdb.retrieval...`` to the file in
the checkout. Hatchling copies its static ``force-include`` table into editable
wheels too, hence the mapping lives here, applied to regular wheels only.
"""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: Checkout path -> path inside the wheel.
PACKAGE_LAYOUT = {
    "platform/package_root.py": "engramdb/__init__.py",
    "platform": "engramdb/platform",
    "ingestion": "engramdb/ingestion",
    "retrieval": "engramdb/retrieval",
    "cypher": "engramdb/cypher",
}


class LayoutHook(BuildHookInterface):
    """Adds :data:`PACKAGE_LAYOUT` to regular wheels; editable wheels get only the path file."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "wheel" and version != "editable":
            build_data["force_include"].update(PACKAGE_LAYOUT)
