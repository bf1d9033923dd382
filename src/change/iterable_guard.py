def _zr_guard_iterables(module_name):
    """Make every public function of `module_name` that takes a parameter named like
    `iterable` check itself: given a list or tuple there, it is called again with a one-shot
    iterator of the same items, and a different plain result (or an exception) fails the
    calling test with both results. Any iterable must give the same answer; code written for
    lists only (`if not iterable`, `len`, indexing) does not. Nested calls are not checked
    again, results that are not plain data (iterators, objects) are not compared."""
    import functools
    import importlib
    import inspect
    import sys
    import threading

    plain = (bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset, type(None))
    state = threading.local()
    try:
        module = importlib.import_module(module_name)
    except Exception:
        return

    def iterable_params(signature):
        one = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        return [
            p.name
            for p in signature.parameters.values()
            if "iterable" in p.name.lower() and p.kind not in one
        ]

    def guard(function, signature, names):
        @functools.wraps(function)
        def guarded(*args, **kwargs):
            if getattr(state, "inside", False):
                return function(*args, **kwargs)
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return function(*args, **kwargs)
            turned = [n for n in names if isinstance(bound.arguments.get(n), (list, tuple))]
            if not turned:
                return function(*args, **kwargs)
            items = {n: list(bound.arguments[n]) for n in turned}
            state.inside = True
            try:
                result = function(*args, **kwargs)
                if not isinstance(result, plain):
                    return result
                for n in turned:
                    bound.arguments[n] = iter(items[n])
                how = "%s() with %s given as an iterator of the same items" % (
                    function.__name__,
                    ", ".join(turned),
                )
                try:
                    again = function(*bound.args, **bound.kwargs)
                except Exception as error:
                    raise AssertionError(
                        "%s raised %s: %s; given the list it returned %r (any iterable, a "
                        "one-shot iterator too, must give the same)"
                        % (how, type(error).__name__, error, result)
                    ) from None
                if again != result:
                    raise AssertionError(
                        "%s returned %r; given the list it returned %r (any iterable, a "
                        "one-shot iterator too, must give the same)" % (how, again, result)
                    )
                return result
            finally:
                state.inside = False

        return guarded

    for name, function in list(vars(module).items()):
        if name.startswith("_") or not inspect.isfunction(function):
            continue
        if function.__module__ != module.__name__:
            continue
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):
            continue
        names = iterable_params(signature)
        if not names:
            continue
        guarded = guard(function, signature, names)
        for loaded in list(sys.modules.values()):
            try:
                if getattr(loaded, name, None) is function:
                    setattr(loaded, name, guarded)
            except Exception:
                pass
