#!/usr/bin/env python3
"""Seed corpora for the fuzz targets, from the vectors (nothing large is committed): one file per
input, in Fuzz/corpus/<Target>/. libFuzzer adds what it finds there as it runs.

    python3 Fuzz/seed-corpora.py        (make fuzz runs it)
"""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
VECTORS = ROOT / "Spec" / "vectors"
CORPUS = ROOT / "Fuzz" / "corpus"


def write(target, name, text):
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)


def main():
    # Responses: the status on the first line, then each field as `name: value`.
    http = json.loads((VECTORS / "http" / "server-feedback.json").read_text())
    for index, case in enumerate(http["cases"]):
        response = case["response"]
        lines = [str(response["status"])] + [f"{name}:{value}" for name, value in response["fields"]]
        write("FuzzHTTP", f"case-{index}", "\n".join(lines))
    files = sorted(VECTORS.glob("*.json")) + sorted((VECTORS / "scenarios").glob("*.json"))
    for path in files:
        if path.name == "schema.json":
            continue
        vectors = json.loads(path.read_text())
        for index, case in enumerate(vectors.get("cases", [])[:20]):
            # A scenario case alone, as a file of one case.
            write("FuzzFiles", f"{path.stem}-case-{index}", json.dumps(dict(vectors, cases=[case], caseCount=1)))
        # Each story alone, as JSON and as a file of one story (whole files are too slow to mutate).
        for index, story in enumerate(vectors.get("stories", [])[:20]):
            write("FuzzJSON", f"{path.stem}-{index}", json.dumps(story))
            write("FuzzFiles", f"{path.stem}-{index}", json.dumps(dict(vectors, stories=[story], caseCount=1)))
            if "configuration" in story and "strategy" in vectors:
                configuration = {"strategy": vectors["strategy"], "configuration": story["configuration"]}
                write("FuzzConfigurations", f"{path.stem}-{index}", json.dumps(configuration))
    write("FuzzFiles", "http", json.dumps(dict(http, cases=http["cases"][:3], caseCount=3)))
    # Answers over the protocol: the first byte picks the limiter, then one answer per line (each
    # strategy's expected results, a hello, a feedback answer, a refusal).
    for path in sorted(VECTORS.glob("*.json")):
        if path.name == "schema.json":
            continue
        for index, story in enumerate(json.loads(path.read_text()).get("stories", [])[:5]):
            answers = [json.dumps({"type": "result", "id": f"L{n}", "result": step["expect"]})
                       for n, step in enumerate(story.get("steps", []))]
            write("FuzzProtocol", f"{path.stem}-{index}", chr(index) + "\n".join(answers))
    write("FuzzProtocol", "hello", "\0" + json.dumps({"type": "hello", "protocol": 1, "events": ["weighted"]}))
    write("FuzzProtocol", "feedback", "\0" + json.dumps({"type": "feedback", "id": "F1", "result": http["cases"][0]["expect"]}))
    write("FuzzProtocol", "refused", "\0" + json.dumps({"type": "refused", "id": "S1", "field": "limit", "problem": "mustBePositive"}))
    # Script replies: the operation byte, then one bulk string per line (Scripts/README.md).
    replies = {
        "allowed": ["kind", "allowed", "remaining", "4", "idle", "1795572099900491000"],
        "rejected": ["kind", "rejected", "retryAfterNanoseconds", "250000000"],
        "until-release": ["kind", "rejectedUntilRelease", "shortfall", "2"],
        "never": ["kind", "neverAllowed"],
        "lease": ["kind", "allowed", "remaining", "0", "lease", "7"],
        "invalid": ["kind", "invalid", "field", "permits", "problem", "exceedsMaximum", "maximum", "3"],
    }
    for name, values in replies.items():
        for operation in range(4):
            write("FuzzRedis", f"{name}-{operation}", chr(operation + 36) + "\n".join(values))
    # The same replies as the wire carries them (RESP2), for the connection's reader.
    for name, values in replies.items():
        wire = f"*{len(values)}\r\n" + "".join(f"${len(v)}\r\n{v}\r\n" for v in values)
        write("FuzzRedis", f"wire-{name}", wire)
    write("FuzzRedis", "wire-error", "-NOSCRIPT No matching script. Please use EVAL.\r\n")
    write("FuzzFiles", "expectations", "# expectations\nrandom gcra\tGCRA-6 retry-after\tearly retry\n")
    write("FuzzFiles", "profile", json.dumps({"timeUnitNanoseconds": 1000, "events": ["weighted"]}))
    print(f"seed corpora written to {CORPUS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
