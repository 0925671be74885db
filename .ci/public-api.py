#!/usr/bin/env python3
"""Each library product's public API as one readable, sorted listing, an article of the product's
documentation: Sources/<Product>/<Product>.docc/API.md.

The listing is rendered from the toolchain's symbol graphs (swift-symbolgraph-extract over the
modules `swift build` left in .build/debug/Modules): every public declaration, nested under its
type, with the protocols each type conforms to, and above it the first sentence of its doc comment
(so a summary that changes shows in review, as the API does).

    public-api.py write  [--build-dir .build/debug]   regenerate the listings (make api)
    public-api.py check  [--build-dir .build/debug]   fail when they differ (make api-check)
"""

import argparse
import difflib
import json
import pathlib
import re
import subprocess
import sys
import tempfile

# The library products, in the order the README introduces them.
PRODUCTS = [
    "RateLimitCore",
    "RateLimitClock",
    "RateLimitActor",
    "RateLimitLock",
    "RateLimitDispatch",
    "RateLimitAtomic",
    "RateLimitHTTP",
    "RateLimitClient",
    "RateLimitRedis",
    "RateLimitConformance",
    "RateLimitTesting",
]

# Conformances every type has, or that the compiler adds: noise in a listing.
IMPLIED = {"Swift.Copyable", "Swift.Escapable", "Swift.SendableMetatype", "Swift.BitwiseCopyable"}


def target_triple():
    out = subprocess.run(["swift", "-print-target-info"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["target"]["unversionedTriple"]


# The package's C modules that products import (through RateLimitShell and RateLimitLock), found by
# their module maps.
C_MODULE_DIRS = ["Sources/CPrefetch/include", "Sources/CReaderSlots/include"]


def include_flags(build_dir):
    """-I for the built Swift modules and each C module the products import."""
    flags = ["-I", str(build_dir / "Modules")]
    for directory in C_MODULE_DIRS:
        flags += ["-I", directory]
    return flags


def extract(module, build_dir, work):
    subprocess.run(
        [
            "swift-symbolgraph-extract",
            "-module-name", module,
            *include_flags(build_dir),
            "-target", target_triple(),
            "-output-dir", str(work),
            "-minimum-access-level", "public",
            "-skip-inherited-docs",
            "-skip-synthesized-members",
        ],
        check=True,
    )
    graphs = []
    for path in sorted(work.glob(f"{module}*.symbols.json")):
        graphs.append(json.loads(path.read_text()))
    return graphs


def declaration(symbol):
    text = "".join(f["spelling"] for f in symbol.get("declarationFragments", []))
    text = re.sub(r"\s+", " ", text).strip()
    # Attributes the listing does not need to say twice.
    text = re.sub(r"^@(inlinable|inline\(__always\)|usableFromInline|discardableResult) ", "", text)
    return text


def summary(symbol):
    """The first sentence of a symbol's doc comment (its first paragraph, up to the first full
    stop followed by a space), at most 118 characters; "" without one."""
    lines = [line.get("text", "") for line in symbol.get("docComment", {}).get("lines", [])]
    paragraph = []
    for line in lines:
        if not line.strip():
            if paragraph:
                break
            continue
        if line.lstrip().startswith(("- ", "```")) and paragraph:
            break
        paragraph.append(line.strip())
    text = " ".join(paragraph)
    match = re.search(r"^(.*?(?<!e\.g)(?<!i\.e)[.!?])(\s|$)", text)
    sentence = match.group(1) if match else text
    return sentence if len(sentence) <= 118 else sentence[:117].rstrip() + "…"


def constraints_text(constraints):
    parts = []
    for c in constraints or []:
        op = {"conformance": ":", "superclass": ":", "sameType": "=="}.get(c["kind"], c["kind"])
        parts.append(f"{c['lhs']} {op} {c['rhs']}")
    return " where " + ", ".join(parts) if parts else ""


def render(module, graphs):
    """Lines of the listing: one per declaration, members indented under their type."""
    symbols = {}
    conformances = {}  # type's precise id -> set of "Protocol[ where ...]"
    extended_types = {}  # precise id of a type from another module -> its name
    for graph in graphs:
        for s in graph["symbols"]:
            symbols[s["identifier"]["precise"]] = s
        for r in graph["relationships"]:
            if r["kind"] == "conformsTo":
                target = r.get("targetFallback") or symbols.get(r["target"], {}).get("names", {}).get("title", r["target"])
                if target in IMPLIED:
                    continue
                target = target.removeprefix("Swift.").removeprefix(f"{module}.")
                conformances.setdefault(r["source"], set()).add(target + constraints_text(r.get("swiftConstraints")))
            if r["kind"] == "memberOf" and r["target"] not in symbols and "targetFallback" in r:
                extended_types[r["target"]] = r["targetFallback"]

    # Constraints a type states itself, so that a member's extension shows only what it adds.
    own = {}
    for s in symbols.values():
        own[tuple(s["pathComponents"])] = {constraints_text([c]) for c in s.get("swiftGenerics", {}).get("constraints", [])}

    entries = []
    for precise, s in symbols.items():
        kind = s["kind"]["identifier"]
        if kind == "swift.extension":
            continue
        path = s["pathComponents"]
        line = declaration(s)
        inherited = own.get(tuple(path[:-1]), set())
        added = [c for c in s.get("swiftExtension", {}).get("constraints", []) if constraints_text([c]) not in inherited]
        if added and " where " not in line:
            line += "  // in an extension" + constraints_text(added)
        conf = sorted(conformances.get(precise, ()))
        if conf:
            # `struct S<T> : P, Q where T : R`: conformances before the generic where clause.
            head, sep, tail = line.partition(" where ")
            line = head + (" & " if kind == "swift.protocol" and ":" in head else " : ") + ", ".join(conf) + sep + tail
        entries.append((path, line, summary(s)))
    # Conformances added by this module to other modules' types.
    for precise, conf in conformances.items():
        if precise not in symbols and conf:
            name = extended_types.get(precise, precise)
            for c in sorted(conf):
                entries.append(([name, ""], f"extension {name} : {c}", ""))

    # Members this module adds to another module's type sit under an `extension` line.
    declared = {tuple(e[0]) for e in entries}
    for path, _, _ in list(entries):
        if len(path) > 1 and (path[0],) not in declared:
            declared.add((path[0],))
            entries.append(([path[0]], f"extension {path[0]}", ""))
    entries.sort(key=lambda e: ([(p.lower(), p) for p in e[0]], e[1]))
    lines = []
    for path, line, text in entries:
        indent = "    " * (len(path) - 1)
        if text:
            lines.append(f"{indent}/// {text}")
        lines.append(indent + line)
    return lines


def listing(module, build_dir):
    with tempfile.TemporaryDirectory() as work:
        graphs = extract(module, build_dir, pathlib.Path(work))
    body = render(module, graphs)
    head = [
        f"# Public API",
        "",
        f"Every public declaration of `{module}` on one page.",
        "",
        "Generated from the toolchain's symbol graph by `make api`: each declaration under the first",
        "sentence of its doc comment (the rest is in the source and the rest of this documentation).",
        "`make verify` fails when the API and this listing differ, so a change to the API or to a",
        "summary shows here, in review.",
        "",
        "```swift",
    ]
    return "\n".join(head + body + ["```", ""])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["write", "check"])
    parser.add_argument("--build-dir", default=".build/debug")
    args = parser.parse_args()
    build_dir = pathlib.Path(args.build_dir)
    changed = []
    for module in PRODUCTS:
        text = listing(module, build_dir)
        catalogue = pathlib.Path("Sources") / module / f"{module}.docc"
        catalogue.mkdir(exist_ok=True)
        path = catalogue / "API.md"
        old = path.read_text() if path.exists() else ""
        if text == old:
            continue
        if args.mode == "write":
            path.write_text(text)
            print(f"wrote {path}")
        else:
            changed.append(path)
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True), str(path), "built API"))
    if changed:
        print(f"\nThe public API differs from {', '.join(map(str, changed))}.")
        print("If the change is intended, run `make api` and commit the listings with it.")
        return 1
    if args.mode == "check":
        print(f"api-check: the public API of {len(PRODUCTS)} products matches Sources/<Product>/<Product>.docc/API.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
