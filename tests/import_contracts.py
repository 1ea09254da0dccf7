"""A contract type for import-linter that the built-in ones cannot say: "these modules import
only the standard library and the modules named here" (the hook path).

Registered in pyproject.toml (``[tool.importlinter] contract_types``); ``scripts/check`` runs
``lint-imports`` with the repository on ``PYTHONPATH`` so this module is found.
"""

from __future__ import annotations

import sys

import grimp
from importlinter import Contract, ContractCheck, fields, output
from importlinter.application import contract_utils

# 3.12 renamed the built-in SHA-2 module; store.py tries both names.
_STDLIB = frozenset(sys.stdlib_module_names) | {"_sha2", "_sha256"}


class OnlyImports(Contract):
    """Every module the sources import, directly or not, is either in ``allowed_modules`` (a
    module and its descendants) or in the standard library.  A broken contract lists each
    module that is neither, with the shortest chain that reaches it."""

    type_name = "only_imports"

    source_modules = fields.ListField(subfield=fields.ModuleField())
    allowed_modules = fields.ListField(subfield=fields.ModuleField())
    # "importer -> imported" edges the sources never take at run time (a branch they never
    # ask for); each one wants a comment in the configuration saying why.
    ignore_imports = fields.SetField(subfield=fields.ImportExpressionField(), required=False)

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        allowed = [m.name for m in self.allowed_modules]
        sources = [m.name for m in self.source_modules]
        # import-linter hands each contract its own copy of the graph.
        contract_utils.remove_ignored_imports(
            graph=graph, ignore_imports=self.ignore_imports,
            unmatched_alerting=contract_utils.AlertLevel.ERROR)

        def ok(name: str) -> bool:
            return name.split(".")[0] in _STDLIB or any(
                name == a or name.startswith(a + ".") for a in allowed + sources)

        stray: dict[str, list[str]] = {}
        for source in sources:
            for module in sorted(graph.find_upstream_modules(source)):
                if ok(module) or module in stray:
                    continue
                chain = graph.find_shortest_chain(importer=source, imported=module)
                stray[module] = list(chain or (source, module))
        return ContractCheck(kept=not stray, metadata={"stray": stray})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for module, chain in check.metadata["stray"].items():
            output.print_error(f"{module} is neither the standard library nor named for it:")
            output.indent_cursor()
            output.print_error(" -> ".join(chain), bold=False)
            output.new_line()
