

# ---- zerorepo: independent versions of the new functions, called beside them ----
import ast as _zr_ast
import collections.abc as _zr_abc
import copy as _zr_copy
import importlib as _zr_importlib
import itertools as _zr_itertools
import json as _zr_json
import math as _zr_math
import os as _zr_os
import re as _zr_re
import select as _zr_select
import signal as _zr_signal
import time as _zr_time

_ZR_ITEMS = 10000
_ZR_RECORDS = 100
_ZR_VARIANT_TEST = "test_zy_zerorepo_variants"
# Variant runs of the file's tests, at most; literals changed per test, at most; and the wall
# seconds the child that runs them gets, counted from the harness's import so that the calls
# before them leave the runner's limit room.
_ZR_VARIANTS = 48
_ZR_SITES = 8
# Ways one literal may change, at most (`_zr_changes`): every test's first two ways are run
# before any third.
_ZR_CHANGES = 4
_ZR_VARIANT_SECONDS = 8.0
_ZR_FILE_SECONDS = 18.0
# Bytes of records printed, at most, the variants' first: the runner keeps the last 16 KiB of
# the output, and the tests' own calls, printed last, are the ones that must come back.
_ZR_PRINTED_VARIANTS = 5000
_ZR_PRINTED_CALLS = 8000
_zr_started = _zr_time.monotonic()
_zr_records = []
_zr_variant_records = []


def _zr_versions(module_name, name, sources):
    """The written function and each version (None where its source did not define one). A
    version runs in a copy of the module's namespace, so it sees the module's names and its
    own imports and helpers change nothing of the module."""
    module = _zr_importlib.import_module(module_name)
    written = getattr(module, name)
    versions = []
    for i, source in enumerate(sources):
        space = dict(vars(module))
        try:
            exec(compile(source, "<version %d of %s>" % (i + 1, name), "exec"), space)
        except Exception:
            versions.append(None)
            continue
        version = space.get(name)
        usable = callable(version) and version is not written
        versions.append(version if usable else None)
    return written, versions


def _zr_keep(value):
    # An iterator argument is read once; each call gets its own iterator over the items.
    if isinstance(value, _zr_abc.Iterator):
        return ("items", list(_zr_itertools.islice(value, _ZR_ITEMS)))
    return ("value", value)


def _zr_give(kept):
    kind, value = kept
    if kind == "items":
        return iter(list(value))
    try:
        return _zr_copy.deepcopy(value)
    except Exception:
        return value


def _zr_outcome(function, args, kwargs):
    try:
        value = function(*[_zr_give(a) for a in args], **{k: _zr_give(v) for k, v in kwargs.items()})
        if isinstance(value, _zr_abc.Iterator):
            value = list(_zr_itertools.islice(value, _ZR_ITEMS))
        return ("returned", value)
    except Exception as error:
        return ("raised", type(error))


def _zr_equal(x, y, depth=0):
    if depth > 40:
        return False
    numbers = (int, float)
    if isinstance(x, numbers) and isinstance(y, numbers):
        if isinstance(x, float) or isinstance(y, float):
            if _zr_math.isnan(x) and _zr_math.isnan(y):
                return True
            return _zr_math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)
        return x == y
    sequences = (list, tuple)
    if isinstance(x, sequences) and isinstance(y, sequences):
        return len(x) == len(y) and all(_zr_equal(a, b, depth + 1) for a, b in zip(x, y))
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_zr_equal(x[k], y[k], depth + 1) for k in x)
    try:
        if bool(x == y):
            return True
    except Exception:
        pass
    if type(x) is type(y) and hasattr(x, "__dict__") and hasattr(y, "__dict__"):
        return _zr_equal(vars(x), vars(y), depth + 1)
    return False


def _zr_same(a, b):
    if a[0] != b[0]:
        return False
    if a[0] == "raised":
        return issubclass(a[1], b[1]) or issubclass(b[1], a[1])
    return _zr_equal(a[1], b[1])


def _zr_short(value):
    try:
        text = repr(value)
    except Exception:
        text = "<unprintable>"
    return text if len(text) <= 200 else text[:200] + "..."


def _zr_show(outcome):
    if outcome is None:
        return None
    if outcome[0] == "raised":
        return {"raised": [k.__name__ for k in outcome[1].__mro__]}
    return {"returned": _zr_short(outcome[1])}


def _zr_watch(name, written, versions):
    """`name` as the tests call it: the written function, called beside each version."""

    def call(*args, **kwargs):
        args = [_zr_keep(a) for a in args]
        kwargs = {k: _zr_keep(v) for k, v in kwargs.items()}
        mine = _zr_outcome(written, args, kwargs)
        theirs = [None if v is None else _zr_outcome(v, args, kwargs) for v in versions]
        ran = [t for t in theirs if t is not None]
        shown = [_zr_short(a[1]) for a in args] + ["%s=%s" % (k, _zr_short(v[1])) for k, v in kwargs.items()]
        test = _zr_os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0].split("::")[-1]
        if len(_zr_records) < _ZR_RECORDS:
            _zr_records.append({
                "test": test,
                "function": name,
                "call": "%s(%s)" % (name, ", ".join(shown)),
                "written": _zr_show(mine),
                "versions": [_zr_show(t) for t in theirs],
                "agree": [t is not None and _zr_same(mine, t) for t in theirs],
                "versions_agree": all(_zr_same(ran[0], t) for t in ran[1:]),
            })
        return written(*[_zr_give(a) for a in args], **{k: _zr_give(v) for k, v in kwargs.items()})

    return call


def _zr_changes(value):
    """What a literal of a test may become in a variant: a number 0 or one more, a string
    empty or its first half, or the first number written in it 0 or one more (text that
    encodes a date, a duration or a version keeps its shape, where emptied or halved it is
    only an error). Only inputs next to the one the test wrote, of its kind and inside the
    range most functions allow (negated or upper-cased inputs are often ones a request leaves
    open, where two right answers differ)."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int):
        changed = [0, value + 1]
    elif isinstance(value, float):
        changed = [0.0, value + 1.0]
    elif isinstance(value, str):
        changed = ["", value[: len(value) // 2]]
        digits = _zr_re.search(r"[0-9]+", value)
        if digits:
            before, after = value[: digits.start()], value[digits.end():]
            changed += [before + "0" + after, before + str(int(digits.group()) + 1) + after]
    else:
        return []
    out = []
    for v in changed:
        if v != value and v not in out:
            out.append(v)
    return out


def _zr_names(nodes):
    return {n.id for root in nodes for n in _zr_ast.walk(root) if isinstance(n, _zr_ast.Name)}


def _zr_sites(function, watched):
    """The literals a variant of test `function` may change: in the arguments of a call of a
    watched function, and in the values the test assigns to a name such a call passes it;
    never in what the test asserts. Found in one order, so that a copy of the test finds the
    same ones; `_ZR_SITES` at most, so one long list does not take every run."""
    arguments = []
    for node in _zr_ast.walk(function):
        if isinstance(node, _zr_ast.Call) and isinstance(node.func, _zr_ast.Name) and node.func.id in watched:
            arguments.extend(node.args)
            arguments.extend(k.value for k in node.keywords)
    passed = _zr_names(arguments)
    roots = list(arguments)
    for node in _zr_ast.walk(function):
        if isinstance(node, (_zr_ast.Assign, _zr_ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, _zr_ast.Assign) else [node.target]
            if _zr_names(targets) & passed:
                roots.append(node.value)
    sites, seen = [], set()
    for root in roots:
        for node in _zr_ast.walk(root):
            if id(node) in seen:
                continue
            seen.add(id(node))
            literal = isinstance(node, _zr_ast.Constant) and _zr_changes(node.value)
            sequence = isinstance(node, (_zr_ast.List, _zr_ast.Tuple)) and node.elts
            if literal or sequence:
                sites.append(node)
    return sites[:_ZR_SITES]


def _zr_variant(function, watched, site, change):
    """A copy of test `function` with its `site`-th literal changed (`change`-th way), or None.
    A list or tuple is emptied, or loses its first item."""
    copy = _zr_copy.deepcopy(function)
    sites = _zr_sites(copy, watched)
    if site >= len(sites):
        return None
    node = sites[site]
    if isinstance(node, _zr_ast.Constant):
        changes = _zr_changes(node.value)
        if change >= len(changes):
            return None
        node.value = changes[change]
    else:
        shapes = [[], node.elts[1:]]
        if change >= len(shapes) or shapes[change] == node.elts:
            return None
        node.elts = shapes[change]
    return copy


def _zr_file_tests():
    try:
        with open(__file__, encoding="utf-8") as handle:
            tree = _zr_ast.parse(handle.read())
    except Exception:
        return []
    return [
        f for f in tree.body
        if isinstance(f, _zr_ast.FunctionDef) and f.name.startswith("test_")
        and f.name not in (_ZR_VARIANT_TEST, "test_zz_zerorepo_versions_report")
        and not f.args.args and not f.decorator_list
    ]


def _zr_run_variants(watched, tests, out):
    """In the child: each test run again with one literal changed, each record written to
    `out` as a JSON line as soon as its call is done."""
    # A call some test made already says nothing new.
    seen = {(r["function"], r["call"]) for r in _zr_records}
    del _zr_records[:]
    runs = 0
    for change in range(_ZR_CHANGES):
        for function in tests:
            for site in range(len(_zr_sites(function, watched))):
                if runs >= _ZR_VARIANTS:
                    return
                variant = _zr_variant(function, watched, site, change)
                if variant is None:
                    continue
                runs += 1
                before = len(_zr_records)
                try:
                    module = _zr_ast.Module(body=[variant], type_ignores=[])
                    _zr_ast.fix_missing_locations(module)
                    space = dict(globals())
                    exec(compile(module, "<variant of %s>" % variant.name, "exec"), space)
                    space[variant.name]()
                except BaseException:
                    pass
                for record in _zr_records[before:]:
                    key = (record["function"], record["call"])
                    if key in seen:
                        continue
                    seen.add(key)
                    record["test"] = _ZR_VARIANT_TEST
                    _zr_os.write(out, (_zr_json.dumps(record) + "\n").encode())
                del _zr_records[before:]


def _zr_variants(watched):
    """Each test of this file run again with one of its literals changed, so the functions are
    called on inputs next to those the model and the request picked. The runs are made in a
    forked child, killed when its time is up: code that loops, exits or catches everything
    there loses the variants' records only, never the calls' own."""
    tests = _zr_file_tests()
    seconds = min(_ZR_VARIANT_SECONDS, _ZR_FILE_SECONDS - (_zr_time.monotonic() - _zr_started))
    if not tests or seconds <= 0:
        return
    try:
        read, write = _zr_os.pipe()
        child = _zr_os.fork()
    except Exception:
        return
    if child == 0:
        try:
            _zr_os.close(read)
            null = _zr_os.open(_zr_os.devnull, _zr_os.O_WRONLY)
            _zr_os.dup2(null, 1)
            _zr_os.dup2(null, 2)
            _zr_run_variants(watched, tests, write)
        finally:
            _zr_os._exit(0)
    _zr_os.close(write)
    deadline = _zr_time.monotonic() + seconds
    data = b""
    while True:
        left = deadline - _zr_time.monotonic()
        if left <= 0:
            break
        ready, _, _ = _zr_select.select([read], [], [], left)
        if not ready:
            break
        chunk = _zr_os.read(read, 65536)
        if not chunk:
            break
        data += chunk
    _zr_os.close(read)
    try:
        _zr_os.kill(child, _zr_signal.SIGKILL)
    except Exception:
        pass
    try:
        _zr_os.waitpid(child, 0)
    except Exception:
        pass
    # Only whole lines: the last one may have been cut by the kill.
    for line in data.decode("utf-8", "replace").split("\n")[:-1]:
        try:
            _zr_variant_records.append(_zr_json.loads(line))
        except Exception:
            pass


def _zr_print(records, tag, budget):
    printed = 0
    for record in records:
        line = tag + _zr_json.dumps(record)
        printed += len(line) + 1
        if printed > budget:
            return
        print(line)


def _zr_report(tag):
    """Each record on a line of its own (the first one after pytest's progress dots): the
    variants' first, then the tests' own calls, last so that the runner's tail keeps them."""
    print()
    _zr_print(_zr_variant_records, tag, _ZR_PRINTED_VARIANTS)
    _zr_print(_zr_records, tag, _ZR_PRINTED_CALLS)
