#!/usr/bin/env python3
"""The report excerpt of Spec/Conformance.md ("Reading a report") is a real run's output: this
writes it from the run (`write`, as `make readme` does) or fails when the document's excerpt is not
what the run prints now (`check`, in `make readme-check`), the time column aside. So its counts
(cases, steps, findings) have one source, the command, and cannot go stale.

The run is named in the marker before the excerpt's code block:
    <!-- report-excerpt: ARGUMENTS -->
and runs as `ratelimit-conformance --exec "python3 Examples/python/ratelimiter.py" ARGUMENTS`
(the bug among the arguments), with the debug build of the command."""
import pathlib
import re
import shlex
import subprocess
import sys

DOCUMENT = pathlib.Path("Spec/Conformance.md")
MARKER = re.compile(r"<!-- report-excerpt: (.*?) -->\n```\n(.*?)```\n", re.S)
COMMAND = ".build/debug/ratelimit-conformance"


def excerpt(arguments):
    """The excerpt of the report of the run with `arguments`."""
    bug = [a for a in shlex.split(arguments) if a.startswith("--bug=")]
    rest = [a for a in shlex.split(arguments) if not a.startswith("--bug=")]
    implementation = "python3 Examples/python/ratelimiter.py" + "".join(f" --bug {b[6:]}" for b in bug)
    run = subprocess.run([COMMAND, "--exec", implementation, *rest], capture_output=True, text=True, timeout=600)
    lines = run.stdout.splitlines()
    if run.returncode not in (0, 1):  # 1: the run found what the excerpt shows
        sys.exit(f"report-excerpt: the run exited {run.returncode}:\n{run.stdout[-2000:]}{run.stderr[-2000:]}")

    def index(prefix):
        found = next((i for i, line in enumerate(lines) if line.startswith(prefix)), None)
        if found is None:
            sys.exit(f"report-excerpt: the run printed no line starting {prefix!r}:\n{run.stdout[-3000:]}")
        return found

    header = index("strategy ")
    table = [lines[header], lines[header + 1]]
    table += [line for line in lines[header + 2:] if line.strip()][:1]
    findings = index("Findings by cause")
    groups = [line for line in lines[findings + 1:] if line.startswith("FAIL ") and " TB-" in line.split(":")[0]]
    cases = index("Cases that differ:")
    shrunk = next((i for i, line in enumerate(lines) if re.match(r"^\S+: random trace \d+ \(seed \d+\) fails", line)), None)
    if shrunk is None:
        sys.exit(f"report-excerpt: the run shrank no random trace:\n{run.stdout[-3000:]}")
    original = lines[index_after(lines, shrunk, "in the original trace:")]
    replay = lines[index_after(lines, shrunk, "replay:")]
    block = table + ["", lines[findings], *groups, "", lines[cases], *lines[cases + 1:cases + 3], "..."]
    block += [lines[shrunk], "...", original, replay, "as a regression vector:",
              '{ "format": "ratelimit-conformance-vectors", ... }']
    return "\n".join(block) + "\n"


def index_after(lines, start, prefix):
    """The index of the first line from `start` that starts with `prefix`; exits when there is none."""
    found = next((i for i in range(start, len(lines)) if lines[i].startswith(prefix)), None)
    if found is None:
        sys.exit(f"report-excerpt: no line starting {prefix!r} after the shrunk trace")
    return found


def untimed(text):
    """The excerpt without its time column (the table's last column, which every run changes)."""
    return re.sub(r"\s+\d+\.\d+s$", "", text, flags=re.M)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    text = DOCUMENT.read_text()
    matches = list(MARKER.finditer(text))
    if not matches:
        sys.exit(f"report-excerpt: no `<!-- report-excerpt: ... -->` marker in {DOCUMENT}")
    stale = []
    for match in reversed(matches):
        actual = excerpt(match.group(1))
        if mode == "write":
            start, end = match.span(2)
            text = text[:start] + actual + text[end:]
        elif untimed(actual) != untimed(match.group(2)):
            stale.append((match.group(1), match.group(2), actual))
    if mode == "write":
        DOCUMENT.write_text(text)
        print(f"report-excerpt: wrote {len(matches)} excerpt(s) of {DOCUMENT}")
        return
    for arguments, shown, actual in stale:
        print(f"report-excerpt: {DOCUMENT}'s excerpt of `{arguments}` is not what the run prints now:")
        print("".join(f"  shown:   {line}\n" for line in shown.splitlines()))
        print("".join(f"  printed: {line}\n" for line in actual.splitlines()))
    if stale:
        sys.exit("report-excerpt: run `make readme` to write what the run prints")
    print(f"report-excerpt: the {len(matches)} report excerpt(s) of {DOCUMENT} are what the runs print")


if __name__ == "__main__":
    main()
