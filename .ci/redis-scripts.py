#!/usr/bin/env python3
"""The Redis scripts of Sources/RateLimitRedis/Scripts, embedded in the RateLimitRedis target.

The Lua files are the one source of truth: this writes them, verbatim, into
Sources/RateLimitRedis/RedisScriptSources.swift as raw string literals, with the SHA-1 of each
script as the server receives it (prelude.lua, a newline, the strategy's file: what EVALSHA
names). A test (RedisLimiterTests) requires the embedded texts to equal the files and the SHA-1s to
equal what a real redis-server answers to SCRIPT LOAD, so a script edited without `make
redis-scripts` fails the tests.

It also writes Scripts/functions.lua, the same files as one Redis Functions library (Redis 7.0+,
FUNCTION LOAD, then FCALL), and embeds it too. FUNCTION LOAD runs a library's chunk with no global
but `redis`, so the library defers the files' own top-level code (the prelude's constants, each
strategy's table) to its first call, and keeps what it built for the next ones. The library's name
carries a hash of the files, so a server can hold libraries of several versions at once (function
names are global to a server: they carry it too).

    redis-scripts.py write   regenerate the Swift file and functions.lua (make redis-scripts)
    redis-scripts.py check   fail when either differs from what would be written
"""

import hashlib
import pathlib
import sys

FOLDER = pathlib.Path("Sources/RateLimitRedis/Scripts")
OUTPUT = pathlib.Path("Sources/RateLimitRedis/RedisScriptSources.swift")
LIBRARY = FOLDER / "functions.lua"
# The composite limit's driver (not a script alone) and the script made of it.
COMPOSITE = FOLDER / "composite.lua"
COMPOSITE_SCRIPT = FOLDER / "composite-script.lua"
ENDING = "return run(S, KEYS, ARGV)\n"
# Each script's Swift name and file, in the order of the Spec.
SCRIPTS = [
    ("tokenBucket", "token-bucket"),
    ("intervalTokenBucket", "token-bucket-interval"),
    ("gcra", "gcra"),
    ("fixedWindow", "fixed-window"),
    ("slidingWindowLog", "sliding-window-log"),
    ("leakyBucketMeter", "leaky-bucket-meter"),
    ("concurrency", "concurrency"),
]


def literal(text):
    """A Swift multi-line raw string literal equal to `text`, indented by 8 spaces (as swift-format
    lays out a literal that starts on a declaration's line)."""
    hashes = "#"
    while f'"""{hashes}' in text or f"\\{hashes}" in text:
        hashes += "#"
    lines = text.split("\n")
    body = "\n".join(("        " + line) if line else "" for line in lines)
    return f'{hashes}"""\n{body}\n        """{hashes}'


def library_name(prelude, texts):
    """ratelimit_ and 12 hex digits of the SHA-1 of the files it is made of."""
    digest = hashlib.sha1("\n".join([prelude] + texts).encode()).hexdigest()
    return f"ratelimit_{digest[:12]}"


def function_name(library, file):
    return f"{library}_{file.replace('-', '_')}"


def strategy_tables(texts):
    """Each strategy's file as an entry of the table `strategies`, its S returned."""
    out = ["local strategies = {}"]
    for (_, file), text in zip(SCRIPTS, texts):
        assert text.endswith(ENDING), f"{file}.lua must end with {ENDING!r}"
        out.append("")
        out.append(f"strategies['{file}'] = (function()")
        out.append(text[: -len(ENDING)].rstrip("\n"))
        out.append("return S")
        out.append("end)()")
    return out


def render_composite_script():
    """The composite limit as a script: the prelude, every strategy's table, the driver."""
    prelude = (FOLDER / "prelude.lua").read_text()
    texts = [(FOLDER / f"{file}.lua").read_text() for _, file in SCRIPTS]
    out = [
        prelude.rstrip("\n"),
        "",
        "-- composite-script.lua: the composite limit as one script (prelude.lua, every strategy's",
        "-- table, composite.lua). Written by `make redis-scripts`: do not edit.",
        "",
    ]
    out += strategy_tables(texts)
    out += ["", COMPOSITE.read_text().rstrip("\n"), "", "return composite(strategies, KEYS, ARGV)"]
    return "\n".join(out) + "\n"


def render_library():
    """The Functions library: the prelude and each strategy's file inside one function, built at
    the first call; each strategy registered as `<library>_<file, with underscores>`, and the
    composite limit (composite.lua) as `<library>_composite`."""
    prelude = (FOLDER / "prelude.lua").read_text()
    texts = [(FOLDER / f"{file}.lua").read_text() for _, file in SCRIPTS]
    name = library_name(prelude, texts + [COMPOSITE.read_text()])
    assert prelude.startswith("#!lua\n")
    out = [
        f"#!lua name={name}",
        "-- functions.lua: the scripts of this folder as one Redis Functions library (Redis 7.0 and later):",
        "-- FUNCTION LOAD it once, then FCALL <function> 1 <key> <arguments>, with the arguments and the",
        "-- reply of the scripts (README.md). Written by `make redis-scripts` from prelude.lua and the",
        "-- strategies' files: do not edit.",
        "--",
        "-- FUNCTION LOAD runs this chunk with no global but `redis`, so what the files do at their top",
        "-- level (the prelude's constants, each strategy's table) runs at the first call instead, in",
        "-- build, and what it builds serves every later call until the library is unloaded.",
        "",
        "local function build()",
        prelude[len("#!lua\n"):].rstrip("\n"),
        "",
    ]
    out += strategy_tables(texts)
    out += [
        "",
        COMPOSITE.read_text().rstrip("\n"),
        "",
        "return run, strategies, composite",
        "end",
        "",
        "local run, strategies, composite",
        "",
        "local function call(strategy)",
        "    return function(keys, args)",
        "        if not run then run, strategies, composite = build() end",
        "        if strategy == 'composite' then return composite(strategies, keys, args) end",
        "        return run(strategies[strategy], keys, args)",
        "    end",
        "end",
        "",
    ]
    for _, file in SCRIPTS + [("composite", "composite")]:
        out.append(f"redis.register_function('{function_name(name, file)}', call('{file}'))")
    return name, "\n".join(out) + "\n"


def render():
    prelude = (FOLDER / "prelude.lua").read_text()
    library_name, library = render_library()
    out = [
        "// Generated by `make redis-scripts` (.ci/redis-scripts.py) from Sources/RateLimitRedis/Scripts/*.lua,",
        "// the one source of truth: do not edit. RedisLimiterTests fails when these texts differ from the",
        "// files, or a SHA-1 from what redis-server answers to SCRIPT LOAD.",
        "",
        "/// The scripts' texts, each file verbatim, and the SHA-1 of each script as the server receives it",
        "/// (`prelude.lua`, a newline, the strategy's file).",
        "enum RedisScriptSources {",
        f"    static let prelude = {literal(prelude)}",
        "",
    ]
    for name, file in SCRIPTS:
        text = (FOLDER / f"{file}.lua").read_text()
        sha1 = hashlib.sha1((prelude + "\n" + text).encode()).hexdigest()
        out.append(f"    /// `{file}.lua`.")
        out.append(f"    static let {name} = {literal(text)}")
        out.append(f'    static let {name}SHA1 = "{sha1}"')
        out.append(f'    static let {name}Function = "{function_name(library_name, file)}"')
        out.append("")
    composite = render_composite_script()
    out.append("    /// `composite-script.lua`: the composite limit as one script (`composite.lua` after every")
    out.append("    /// strategy's table).")
    out.append(f"    static let composite = {literal(composite)}")
    out.append(f'    static let compositeSHA1 = "{hashlib.sha1(composite.encode()).hexdigest()}"')
    out.append(f'    static let compositeFunction = "{function_name(library_name, "composite")}"')
    out.append("")
    out.append("    /// `functions.lua`: every script as one Redis Functions library.")
    out.append(f"    static let library = {literal(library)}")
    out.append(f'    static let libraryName = "{library_name}"')
    out.append("}")
    return "\n".join(out) + "\n"



def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    text = render()
    _, library = render_library()
    composite = render_composite_script()
    if mode == "write":
        OUTPUT.write_text(text)
        LIBRARY.write_text(library)
        COMPOSITE_SCRIPT.write_text(composite)
        print(f"wrote {OUTPUT}, {LIBRARY} and {COMPOSITE_SCRIPT}")
        return 0
    for path, expected in ((OUTPUT, text), (LIBRARY, library), (COMPOSITE_SCRIPT, composite)):
        if not path.exists() or path.read_text() != expected:
            print(f"{path} differs from Sources/RateLimitRedis/Scripts/*.lua: run `make redis-scripts`")
            return 1
    print(f"redis-scripts: {OUTPUT}, {LIBRARY} and {COMPOSITE_SCRIPT} hold Sources/RateLimitRedis/Scripts/*.lua as they are")
    return 0


if __name__ == "__main__":
    sys.exit(main())
