"""Exception classes named and shaped as onnxruntime's (one per ONNX Runtime status code), defined once here and
re-exported by nxrt.capi.onnxruntime_pybind11_state: a second copy of that module, loaded under an alias's name
(``sys.modules["onnxruntime"] = nxrt``, then ``import onnxruntime.capi...``), re-exports these same classes, so
``except onnxruntime.capi.onnxruntime_pybind11_state.Fail`` catches what nxrt raises.

The extension raises them with ``str(e) == "[ONNXRuntimeError] : {code} : {NAME} : {message}"``.
"""



class Fail(Exception):
    pass


class InvalidArgument(Exception):
    pass


class NoSuchFile(Exception):
    pass


class NoModel(Exception):
    pass


class EngineError(Exception):
    pass


class RuntimeException(Exception):
    pass


class InvalidProtobuf(Exception):
    pass


class ModelLoaded(Exception):
    pass


class NotImplemented(Exception):  # noqa: A001 - the name onnxruntime uses
    pass


class InvalidGraph(Exception):
    pass


class EPFail(Exception):
    pass


class ModelLoadCanceled(Exception):
    pass


class ModelRequiresCompilation(Exception):
    pass


class NotFound(Exception):
    pass
