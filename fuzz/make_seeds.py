#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/ from the repository's own fixtures.

Seeds are where libFuzzer starts: real RPGs, real recorded model answers against real files,
journals in the checkpoint's format, and path spellings. Rerun after changing the fixtures;
the output is deterministic, and small (a few hundred KiB) on purpose.
"""

import json
import pathlib
import shutil

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
FIX = ROOT / "fixtures"


def put(target, name, data):
    path = CORPUS / target / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def rpg():
    # ml_lib (70 KB) would raise libFuzzer's default input size limit, and slow every run.
    for fixture in ["chain", "cycle", "diamond", "localize", "subgraphs20"]:
        put("rpg", f"{fixture}.json", (FIX / fixture / "rpg.json").read_bytes())


def answer():
    """The file's current content, NUL, the answer."""
    steps = (FIX / "chain/reference/src/chain/steps.py").read_text()
    first = json.loads((FIX / "chain/script.jsonl").read_text().splitlines()[1])["answer"]
    put("answer", "scripted_impl", "\0" + first)
    put("answer", "scripted_impl_over_file", steps + "\0" + first)
    # Recorded answers of the local model: two per role, against the reference file of the
    # node when it has one.
    exchanges = FIX / "ml_lib/recorded/qwen2.5-coder-1.5b-b/exchanges.jsonl"
    taken = {}
    for line in exchanges.read_text().splitlines():
        ex = json.loads(line)
        role = ex["request"]["role"]
        if taken.get(role, 0) >= 2:
            continue
        taken[role] = taken.get(role, 0) + 1
        prompt = ex["request"]["messages"][-1]["content"]
        current = ""
        for word in prompt.split():
            if word.startswith("src/") and word.endswith(".py"):
                ref = FIX / "ml_lib/reference" / word
                current = ref.read_text() if ref.exists() else ""
                break
        put("answer", f"recorded_{role}_{taken[role]}", current + "\0" + ex["response"]["text"])
    # The shapes the parser salvages, against the chain file.
    put("answer", "search_replace_fenced", steps + "\0" + (
        "**src/chain/steps.py**\n```python\n<<<<<<< SEARCH\n    return x * 2\n=======\n"
        "    return x + x\n>>>>>>> REPLACE\n```\n"))
    put("answer", "search_replace_bare_punctuation", steps + "\0" + (
        "<<<<<<< SEARCH\n    return f\u201cvalue={double_plus_one(x)}\u201d\n=======\n"
        "    return f\"value={double_plus_one(x)!r}\"\n>>>>>>> REPLACE\n"))
    put("answer", "search_replace_similar", steps + "\0" + (
        "<<<<<<< SEARCH\n    \"\"\"Double an integr.\n\n    Args:\n        x: Integer to dubble\n"
        "=======\n    \"\"\"Double.\n>>>>>>> REPLACE\n"))
    put("answer", "unified_diff", steps + "\0" + (
        "```diff\n--- a/src/chain/steps.py\n+++ b/src/chain/steps.py\n@@ -12,1 +12,1 @@\n"
        "-    return x * 2\n+    return 2 * x\n@@ -35 +35,2 @@\n     return f\"value={double_plus_one(x)}\"\n"
        "+\n```\n"))
    put("answer", "several_files_and_conflict", "\0" + (
        "Here:\n\n# src/chain/steps.py\n```python\nA = 1\n```\n```python tests/test_steps.py\n"
        "def test_a():\n    pass\n```\n# src/chain/steps.py\n```py\nA = 2\n```\n```js\nx\n```\n"))
    put("answer", "crlf_unclosed", "x = 1\r\ny = 2\r\n\0```python\r\ndef f():\r\n    return 1\r\n")
    put("answer", "prose_only", "\0Sorry, I cannot help with that.")


def journal():
    """Two bytes choosing where a crash cuts the journal, then the journal."""
    header = {"kind": "header", "version": 1, "rpg_sha256": "9f" * 32}

    def node(node, status, **extra):
        record = {"kind": "node", "node": node, "status": status,
                  "timestamp": "2026-01-01T00:00:00Z"}
        record.update(extra)
        record.setdefault("retry_count", 0)
        return record

    lines = [
        header,
        node("node_a", "in_progress"),
        node("node_a", "passed", test_results={"passed": 3, "failed": 0}, duration_ms=812,
             tokens={"test": {"prompt_tokens": 410, "completion_tokens": 96},
                     "impl": {"prompt_tokens": 520, "completion_tokens": 71}}),
        {"kind": "flush", "files": {"src/chain/steps.py": "ab" * 32,
                                    "tests/test_steps.py": "cd" * 32}},
        node("node_b", "failed", retry_count=3, test_results={"passed": 1, "failed": 2},
             failure_reason="tests failed: test_double_plus_one_zero \u2014 assert 0 == 1"),
        {"kind": "flush", "files": {"src/chain/steps.py": "ef" * 32, "old.py": ""}},
        node("node_c", "skipped", failure_reason="depends on node_b, which failed"),
    ]
    text = "".join(json.dumps(l, separators=(",", ":"), ensure_ascii=False) + "\n" for l in lines)
    data = text.encode()
    header_only = (json.dumps(header, separators=(",", ":")) + "\n").encode()
    for name, cut, body in [
        ("whole", 0xFFFF, data),
        ("cut_in_record", len(data) - 40, data),
        ("cut_before_newline", len(data) - 1, data),
        ("header_only", 0, header_only),
    ]:
        put("journal", name, (cut % (len(body) + 1)).to_bytes(2, "little") + body)


def overlay_path():
    """Paths separated by NUL."""
    for name, paths in {
        "plain": ["src/chain/steps.py"],
        "escapes": ["../x.py", "/etc/passwd", "a/../../b.py", "./a.py", ""],
        "spellings": ["src/a.py", "src//a.py", "src/./a.py", "src/a.py/"],
        "unicode": ["src/\u00e9t\u00e9.py", "src/\u202e.py", "src/a\\..\\b.py"],
    }.items():
        put("overlay_path", name, "\0".join(paths))


if __name__ == "__main__":
    shutil.rmtree(CORPUS, ignore_errors=True)
    rpg()
    answer()
    journal()
    overlay_path()
    total = sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file())
    print(f"wrote {sum(1 for p in CORPUS.rglob('*') if p.is_file())} seeds, {total} bytes")
