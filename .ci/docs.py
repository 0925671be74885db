#!/usr/bin/env python3
"""Builds each library product's DocC documentation with the toolchain's own tools: symbol graphs
(swift-symbolgraph-extract over the modules `swift build` left in .build/debug/Modules), then
`docc convert` of the product's catalog, Sources/<Product>/<Product>.docc (its article, and the
API.md listing of public-api.py). Warnings are errors: a broken symbol link fails the build.

    docs.py [--build-dir .build/debug] [--output .build/docs]   (make docs)

Each archive lands in <output>/<Product>.doccarchive; `docc preview` or any static host serves it.
"""

import argparse
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
public_api = __import__("public-api")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", default=".build/debug")
    parser.add_argument("--output", default=".build/docs")
    args = parser.parse_args()
    build_dir, output = pathlib.Path(args.build_dir), pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    triple = public_api.target_triple()
    failed = []
    for product in public_api.PRODUCTS:
        catalog = pathlib.Path("Sources") / product / f"{product}.docc"
        if not (catalog / f"{product}.md").exists():
            failed.append(f"{product}: no article {catalog}/{product}.md")
            continue
        with tempfile.TemporaryDirectory() as work:
            subprocess.run(
                [
                    "swift-symbolgraph-extract",
                    "-module-name", product,
                    *public_api.include_flags(build_dir),
                    "-target", triple,
                    "-output-dir", work,
                    "-minimum-access-level", "public",
                    "-skip-inherited-docs",
                ],
                check=True,
            )
            result = subprocess.run(
                [
                    "docc", "convert", str(catalog),
                    "--additional-symbol-graph-dir", work,
                    "--output-dir", str(output / f"{product}.doccarchive"),
                    "--fallback-display-name", product,
                    "--fallback-bundle-identifier", f"swift-rate-limit.{product}",
                    "--warnings-as-errors",
                ],
                capture_output=True,
                text=True,
            )
        diagnostics = (result.stdout + result.stderr).strip()
        if result.returncode != 0 or "warning:" in diagnostics or "error:" in diagnostics:
            failed.append(f"{product}:\n{diagnostics}")
        else:
            print(f"docs: {product} -> {output / (product + '.doccarchive')}")
    if failed:
        print("docs: failed\n" + "\n".join(failed), file=sys.stderr)
        sys.exit(1)
    print(f"docs: {len(public_api.PRODUCTS)} products documented without a warning")


if __name__ == "__main__":
    main()
