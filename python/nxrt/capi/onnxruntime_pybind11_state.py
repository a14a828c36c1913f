"""Exception classes named and shaped as onnxruntime's (one per ONNX Runtime status code).

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
