#!/usr/bin/env python3
"""The Swift examples of the README and of the DocC articles are the files under Examples, verbatim.

The checked documents are README.md and every article of a product's DocC catalogue,
Sources/*/*.docc/*.md, except the generated API.md listings (`make api-check` checks those).
Every ```swift block of a checked document follows a line `<!-- example: <path> -->` naming the
file it shows; the block must equal the file. The files are executable targets, each built with
its one product (Package.swift), so every example compiles as pasted; a shown manifest
(`Examples/Package/Package.swift`) is checked with `swift package dump-package`. A block that needs
a package this one does not depend on (a Redis client) says so instead, on the line above it:
`<!-- not compiled: needs <package and version> -->`. Every example file (Examples/Swift/*/main.swift
and Examples/Package/Package.swift) is shown in exactly one block of one checked document.

    readme-examples.py check   fail on a block without a file, one that differs, or an example file
                               shown nowhere or twice (make readme-check)
    readme-examples.py write   copy each named file into its block, in every checked document (make readme)
"""

import pathlib
import re
import subprocess
import sys

MARKER = re.compile(r"^<!-- example: (\S+) -->$")
NOT_COMPILED = re.compile(r"^<!-- not compiled: needs .+ -->$")


def documents():
    """README.md, then every DocC article but the generated API listings, in a stable order."""
    articles = sorted(
        path for path in pathlib.Path("Sources").glob("*/*.docc/*.md") if path.name != "API.md"
    )
    return [pathlib.Path("README.md")] + articles


def example_files():
    """Every example file a checked document must show."""
    return sorted(pathlib.Path("Examples/Swift").glob("*/main.swift")) + [pathlib.Path("Examples/Package/Package.swift")]


def blocks(lines):
    """(marker path or None, index of the opening fence, index of the closing fence) per swift block."""
    found = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```swift":
            start = i
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
            above = lines[start - 1].strip() if start > 0 else ""
            if not NOT_COMPILED.match(above):
                marker = MARKER.match(above)
                found.append((marker.group(1) if marker else None, start, end))
            i = end + 1
        else:
            i += 1
    return found


def check_document(document, mode, shown):
    """The problems of one document; in write mode, copies each named file into its block."""
    lines = document.read_text().split("\n")
    problems = []
    # Back to front, so that rewriting a block keeps the indices of those before it.
    for path, start, end in reversed(blocks(lines)):
        if path is None:
            problems.append(
                f"{document}:{start + 1}: a swift block without `<!-- example: Examples/Swift/.../main.swift -->` above it"
            )
            continue
        shown.setdefault(path, []).append(f"{document}:{start}")
        source = pathlib.Path(path)
        if not source.is_file():
            problems.append(f"{document}:{start}: {path} does not exist")
            continue
        if source.name == "Package.swift" and mode == "check":
            manifest = subprocess.run(
                ["swift", "package", "--package-path", str(source.parent), "dump-package"],
                capture_output=True, text=True,
            )
            if manifest.returncode != 0:
                problems.append(f"{document}:{start}: {path} is not a valid manifest:\n{manifest.stderr.strip()}")
        wanted = source.read_text().rstrip("\n").split("\n")
        if lines[start + 1:end] != wanted:
            if mode == "write":
                lines[start + 1:end] = wanted
            else:
                problems.append(f"{document}:{start + 1}: the block differs from {path} (run `make readme` to copy it)")
    if mode == "write":
        text = "\n".join(lines)
        if text != document.read_text():
            document.write_text(text)
    return list(reversed(problems)), len(blocks(lines))


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    if mode not in ("check", "write"):
        print(__doc__)
        return 2
    problems = []
    shown = {}
    count = 0
    with_examples = 0
    for document in documents():
        found, blocks_in_document = check_document(document, mode, shown)
        problems += found
        count += blocks_in_document
        with_examples += 1 if blocks_in_document else 0
    for example in example_files():
        places = shown.get(str(example), [])
        if not places:
            problems.append(f"{example} is shown in no checked document (README.md or a Sources/*/*.docc article)")
        elif len(places) > 1:
            problems.append(f"{example} is shown more than once: {', '.join(places)} (show each example in one place)")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(
        f"readme-check: the {count} Swift examples of README.md and the DocC articles ({with_examples} documents) "
        "are the files they name, each built with its product alone, each file shown once"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
