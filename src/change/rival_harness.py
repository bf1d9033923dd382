

# ---- zerorepo: independent versions of the new functions, called beside them ----
import collections.abc as _zr_abc
import copy as _zr_copy
import importlib as _zr_importlib
import itertools as _zr_itertools
import json as _zr_json
import math as _zr_math
import os as _zr_os

_ZR_ITEMS = 10000
_ZR_RECORDS = 40
_zr_records = []


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
