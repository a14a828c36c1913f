"""nxrt's own calling conventions: load(), positional/keyword inputs, the Outputs container."""

import os

__all__ = ["BoundOutputs", "Outputs", "feed_from_arguments", "load"]


def feed_from_arguments(input_names, args, kwargs):
    """Maps positional arguments (in input order), keywords, or a single dict to an input feed."""
    if len(args) == 1 and not kwargs and isinstance(args[0], dict):
        return args[0]
    if len(args) > len(input_names):
        raise TypeError(f"the model takes {len(input_names)} inputs ({', '.join(input_names)}) "
                        f"but {len(args)} were given")
    feed = dict(zip(input_names, args))
    for name, value in kwargs.items():
        if name in feed:
            raise TypeError(f"input '{name}' given both by position and by keyword")
        feed[name] = value
    return feed


class Outputs:
    """Results of a run with several outputs: index by position or name, attribute access, unpacking, and
    keys() / values() / items() as a mapping."""

    __slots__ = ("_names", "_values")

    def __init__(self, names, values):
        self._names = tuple(names)
        self._values = list(values)

    def __getitem__(self, key):
        if isinstance(key, str):
            try:
                return self._values[self._names.index(key)]
            except ValueError:
                raise KeyError(f"no output named '{key}'; outputs are {list(self._names)}") from None
        return self._values[key]

    def __getattr__(self, name):
        try:
            return self._values[self._names.index(name)]
        except ValueError:
            raise AttributeError(f"no output named '{name}'; outputs are {list(self._names)}") from None

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def __contains__(self, name):
        return name in self._names

    def keys(self):
        return list(self._names)

    def values(self):
        return list(self._values)

    def items(self):
        return list(zip(self._names, self._values))

    def to_dict(self):
        return dict(zip(self._names, self._values))

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | {n for n in self._names if n.isidentifier()})

    def __repr__(self):
        body = ", ".join(f"{name}={value!r}" for name, value in zip(self._names, self._values))
        return f"Outputs({body})"


class BoundOutputs:
    """A session view that computes only some outputs (returned in the order they were named)."""

    def __init__(self, session, names):
        unknown = [name for name in names if name not in session.output_names]
        if unknown:
            raise KeyError(f"no outputs named {unknown}; outputs are {list(session.output_names)}")
        if not names:
            raise ValueError("bind_outputs needs at least one output name")
        self._session = session
        self._names = list(names)

    @property
    def input_names(self):
        return self._session.input_names

    @property
    def output_names(self):
        return tuple(self._names)

    def _wrap(self, results):
        return results[0] if len(results) == 1 else Outputs(self._names, results)

    def __call__(self, *args, **kwargs):
        feed = feed_from_arguments(self._session.input_names, args, kwargs)
        return self._wrap(self._session._sess.run(self._names, feed, None))

    def run_with_values(self, *args, **kwargs):
        feed = feed_from_arguments(self._session.input_names, args, kwargs)
        return self._wrap(self._session._sess.run_values(self._names, feed, None))

    def __repr__(self):
        return f"BoundOutputs({self._names})"


def load(path, *, device=None, providers=None, options=None):
    """Loads a model (path, os.PathLike or bytes) for CPU execution and returns a callable InferenceSession.

    `device` may be None or "cpu"; asking for another device raises EPFail rather than silently running on CPU.
    `providers` may name the available providers and the test-only "TestDeviceExecutionProvider".
    """
    from nxrt import _nxrt
    from nxrt.session import _TEST_DEVICE, InferenceSession, get_available_providers

    if device is not None and str(device).lower() not in ("cpu", "cpu:0"):
        _nxrt._raise_status(11, f"device '{device}' is not available; nxrt was built with CPU support only")
    if providers is not None:
        names = [p if isinstance(p, str) else p[0] for p in providers]
        missing = [name for name in names if name not in get_available_providers() and name != _TEST_DEVICE]
        if missing:
            _nxrt._raise_status(11, f"execution providers {missing} are not available; available: "
                                    f"{get_available_providers()}")
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    return InferenceSession(path, options, providers)
