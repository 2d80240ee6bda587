#!/usr/bin/env python3
"""Checks the module layering of the package: every module a target imports is a dependency the target declares in
Package.swift, and no library module imports one its layer may not use.

Run from the package root (`make lint` and `.ci/run` do): `python3 scripts/check-imports.py`. It reads the targets and
their declared dependencies from `swift package dump-package` (the manifest only; nothing is built or resolved) and
every `import` line of the targets' Swift files (code inside multi-line string literals, such as Python scripts that
tests write, is skipped). Exit 0 with one summary line when the tree holds; exit 1 listing every violation.
"""
import json
import os
import re
import subprocess
import sys

# The layers, lowest first (the chart in Docs/Architecture.md): the first-party modules each library may import.
# A module listed here may import nothing of ours beyond its entry.
LAYERS = {
    "GQLCore": set(),
    "GQLCrypto": {"GQLCore", "CCrypto"},
    "GQLStore": {"GQLCore", "CSQLite", "CStoreCrypt"},
    "GQLHTTP": {"GQLCore"},
    "GQLNet": {"GQLCore", "GQLHTTP"},
    "GQLCache": {"GQLCore", "GQLStore", "GQLNet"},
    "GQLSync": {"GQLCore", "GQLStore", "GQLNet", "GQLCache"},
    "GQLServices": {"GQLCore", "GQLCrypto", "GQLHTTP", "GQLNet"},
    "GQLDevServer": {"GQLCore", "GQLStore", "GQLCrypto"},
    "GQLEmulators": {"GQLCore", "GQLCrypto", "GQLStore", "GQLDevServer"},
    "GQLCodegen": {"GQLCore"},
    "GQLCLI": {
        "GQLCore", "GQLCrypto", "GQLStore", "GQLNet", "GQLCache", "GQLSync", "GQLServices", "GQLDevServer",
        "GQLEmulators", "GQLCodegen",
    },
}

# Modules of the toolchain and the platform: never declared.
SYSTEM = {
    "Foundation", "FoundationEssentials", "FoundationNetworking", "FoundationXML", "Dispatch", "Glibc", "Musl",
    "Darwin", "Synchronization", "_Concurrency", "XCTest", "Testing", "os", "ucrt", "WinSDK",
    "PackagePlugin",
}

IMPORT = re.compile(
    r"^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*(?:public\s+|package\s+|internal\s+|private\s+|fileprivate\s+)?"
    r"import\s+(?:(?:class|struct|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)")


def imports_of(path):
    """The modules a Swift file imports, with the line of each, outside multi-line string literals."""
    found = []
    in_string = False
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not in_string:
                match = IMPORT.match(line)
                if match:
                    found.append((match.group(1), number))
            if line.count('"""') % 2 == 1:
                in_string = not in_string
    return found


def main():
    dump = json.loads(subprocess.run(
        ["swift", "package", "dump-package"], check=True, capture_output=True, text=True).stdout)
    failures = {}
    checked = 0
    for target in dump["targets"]:
        name, kind = target["name"], target["type"]
        if kind == "system":
            continue
        declared = set()
        for dependency in target["dependencies"]:
            (value,) = dependency.values()
            declared.add(value[0])
        default = "Tests" if kind == "test" else "Sources"
        folder = target.get("path") or os.path.join(default, name)
        for root, _, files in os.walk(folder):
            for file in sorted(files):
                if not file.endswith(".swift"):
                    continue
                path = os.path.join(root, file)
                for module, line in imports_of(path):
                    checked += 1
                    if module in SYSTEM or module == name:
                        continue
                    where = f"{path}:{line}"
                    if module not in declared:
                        failures.setdefault((name, module, "which its target does not declare"), []).append(where)
                    ours = LAYERS.keys() | {"CCrypto", "CSQLite", "CStoreCrypt"}
                    if name in LAYERS and module in ours and module not in LAYERS[name]:
                        failures.setdefault((name, module, "which its layer may not use"), []).append(where)
    for (name, module, why), places in sorted(failures.items()):
        more = f" (and {len(places) - 1} more)" if len(places) > 1 else ""
        print(f"{places[0]}: {name} imports {module}, {why}{more}")
    if failures:
        print(f"check-imports: {len(failures)} violation(s)")
        return 1
    print(f"check-imports: {checked} imports in {len(dump['targets'])} targets, every one declared and layered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
