#!/usr/bin/env python3
"""The README's Swift examples are the files under Examples/Swift, verbatim.

Every ```swift block of README.md follows a line `<!-- example: <path> -->` naming the file it
shows; the block must equal the file. The files are executable targets, each built with its one
product (Package.swift), so every example in the README compiles as pasted; a shown manifest
(`Examples/Package/Package.swift`) is checked with `swift package dump-package`. A block that needs
a package this one does not depend on (a Redis client) says so instead, on the line above it:
`<!-- not compiled: needs <package and version> -->`.

    readme-examples.py check   fail on a block without a file, or one that differs (make readme-check)
    readme-examples.py write   copy each named file into its block
"""

import pathlib
import re
import subprocess
import sys

MARKER = re.compile(r"^<!-- example: (\S+) -->$")
NOT_COMPILED = re.compile(r"^<!-- not compiled: needs .+ -->$")


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


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    readme = pathlib.Path("README.md")
    lines = readme.read_text().split("\n")
    problems = []
    # Back to front, so that rewriting a block keeps the indices of those before it.
    for path, start, end in reversed(blocks(lines)):
        if path is None:
            problems.append(f"README.md:{start + 1}: a swift block without `<!-- example: Examples/Swift/.../main.swift -->` above it")
            continue
        source = pathlib.Path(path)
        if not source.is_file():
            problems.append(f"README.md:{start}: {path} does not exist")
            continue
        if source.name == "Package.swift" and mode == "check":
            manifest = subprocess.run(
                ["swift", "package", "--package-path", str(source.parent), "dump-package"],
                capture_output=True, text=True,
            )
            if manifest.returncode != 0:
                problems.append(f"README.md:{start}: {path} is not a valid manifest:\n{manifest.stderr.strip()}")
        wanted = source.read_text().rstrip("\n").split("\n")
        if lines[start + 1:end] != wanted:
            if mode == "write":
                lines[start + 1:end] = wanted
            else:
                problems.append(f"README.md:{start + 1}: the block differs from {path} (run `make readme` to copy it)")
    if mode == "write":
        readme.write_text("\n".join(lines))
    for problem in reversed(problems):
        print(problem)
    if problems:
        return 1
    count = len(blocks(lines))
    print(f"readme-check: the README's {count} Swift examples are the files they name, each built with its product alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
