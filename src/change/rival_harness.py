

# ---- zerorepo: independent versions of the new functions, called beside them ----
import ast as _zr_ast
import collections.abc as _zr_abc
import copy as _zr_copy
import importlib as _zr_importlib
import itertools as _zr_itertools
import json as _zr_json
import math as _zr_math
import os as _zr_os
import signal as _zr_signal
import time as _zr_time

_ZR_ITEMS = 10000
_ZR_RECORDS = 100
# Variant runs of the file's tests, at most, their wall seconds in all, and each one's.
_ZR_VARIANTS = 48
_ZR_VARIANT_SECONDS = 8.0
_ZR_VARIANT_ALARM = 1.0
# Bytes of records printed, at most: the runner keeps the last 16 KiB of the output, and the
# records must come back whole, the calls the tests made first.
_ZR_PRINTED = 12000
_zr_records = []
_zr_seen = set()


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
        key = (name, tuple(shown))
        # A variant's call that some test made already says nothing new.
        again = key in _zr_seen and test.startswith("test_zy_")
        _zr_seen.add(key)
        if len(_zr_records) < _ZR_RECORDS and not again:
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


class _ZrTooLong(BaseException):
    """A variant run past its alarm: it is dropped, not counted (a BaseException, so that no
    `except Exception` in the calls or the watcher records it as an outcome)."""


def _zr_changes(value):
    """What a literal of a test may become in a variant: nothing, a sign turned, one more;
    empty, a first half, upper case. Small on purpose: each is an input as plausible as the
    one the test wrote, and none makes a call much longer."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int):
        changed = [0, -value, value + 1]
    elif isinstance(value, float):
        changed = [0.0, -value, value * 2.5]
    elif isinstance(value, str):
        changed = ["", value[: len(value) // 2], value.upper()]
    else:
        return []
    out = []
    for v in changed:
        if v != value and v not in out:
            out.append(v)
    return out


def _zr_sites(function, watched):
    """The literals a variant of test `function` may change: in the arguments of a call of a
    watched function, and in the values the test assigns (what it passes them), never in
    what it asserts. Found in one order, so that a copy of the test finds the same ones."""
    roots = []
    for node in _zr_ast.walk(function):
        if isinstance(node, _zr_ast.Call) and isinstance(node.func, _zr_ast.Name) and node.func.id in watched:
            roots.extend(node.args)
            roots.extend(k.value for k in node.keywords)
        elif isinstance(node, (_zr_ast.Assign, _zr_ast.AnnAssign)) and node.value is not None:
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
    return sites


def _zr_variant(function, watched, site, change):
    """A copy of test `function` with its `site`-th literal changed (`change`-th way), or None."""
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
        shapes = [[], node.elts[1:], node.elts[::-1]]
        if change >= len(shapes) or (change == 2 and len(node.elts) < 2):
            return None
        node.elts = shapes[change]
    return copy


def _zr_run_variant(function, space):
    def alarm(signum, frame):
        raise _ZrTooLong()

    old = _zr_signal.signal(_zr_signal.SIGALRM, alarm)
    _zr_signal.setitimer(_zr_signal.ITIMER_REAL, _ZR_VARIANT_ALARM)
    try:
        module = _zr_ast.Module(body=[function], type_ignores=[])
        _zr_ast.fix_missing_locations(module)
        exec(compile(module, "<variant of %s>" % function.name, "exec"), space)
        space[function.name]()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:
        pass
    finally:
        _zr_signal.setitimer(_zr_signal.ITIMER_REAL, 0)
        _zr_signal.signal(_zr_signal.SIGALRM, old)


def _zr_variants(watched):
    """Each test of this file run again with one of its literals changed, so the functions
    are called on inputs next to those the model and the request picked."""
    try:
        with open(__file__) as handle:
            tree = _zr_ast.parse(handle.read())
    except Exception:
        return
    tests = [
        f for f in tree.body
        if isinstance(f, _zr_ast.FunctionDef) and f.name.startswith("test_")
        and not f.name.startswith("test_zy_") and not f.name.startswith("test_zz_")
        and not f.args.args and not f.decorator_list
    ]
    start, runs = _zr_time.monotonic(), 0
    for change in range(3):
        for function in tests:
            for site in range(len(_zr_sites(function, watched))):
                if runs >= _ZR_VARIANTS or len(_zr_records) >= _ZR_RECORDS:
                    return
                if _zr_time.monotonic() - start > _ZR_VARIANT_SECONDS:
                    return
                variant = _zr_variant(function, watched, site, change)
                if variant is not None:
                    runs += 1
                    _zr_run_variant(variant, dict(globals()))


def _zr_report(tag):
    """Each record on a line of its own (the first one after pytest's progress dots), those
    of the tests' own calls first, as many as fit in `_ZR_PRINTED` bytes."""
    print()
    ordered = [r for r in _zr_records if not r["test"].startswith("test_zy_")]
    ordered += [r for r in _zr_records if r["test"].startswith("test_zy_")]
    printed = 0
    for record in ordered:
        line = tag + _zr_json.dumps(record)
        printed += len(line) + 1
        if printed > _ZR_PRINTED:
            break
        print(line)
