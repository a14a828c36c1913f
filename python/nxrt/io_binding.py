"""IOBinding: inputs and outputs bound ahead of run_with_iobinding, as in onnxruntime.

Inputs are wrapped without a copy. Outputs bound to caller memory (a buffer pointer or an OrtValue) are written
by the engine straight into that memory where it can (the node producing the output writes there), else copied
into it after the run (see src/session/io_binding.h). An output bound to a device without a buffer
(``bind_output(name, "test_device")``) is allocated there by the engine.
"""

from nxrt._nxrt import Value, _raise_status
from nxrt.ortvalue import OrtValue, _device

__all__ = ["IOBinding"]


class IOBinding:
    def __init__(self, session):
        self._session = session
        self._inputs = {}
        self._output_names = []
        self._output_targets = []
        self._output_devices = []
        self._results = None

    def bind_cpu_input(self, name, arr_on_cpu):
        self._inputs[name] = Value.from_object(arr_on_cpu)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        self._inputs[name] = Value.from_pointer(int(buffer_ptr), list(shape), element_type, _device(device_type))

    def bind_ortvalue_input(self, name, ortvalue):
        self._inputs[name] = ortvalue._value

    def synchronize_inputs(self):
        pass

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None):
        device = _device(device_type)
        target = None
        if buffer_ptr is not None:
            if element_type is None or shape is None:
                raise ValueError("`element_type` and `shape` are to be provided if pre-allocated memory is provided")
            target = Value.from_pointer(int(buffer_ptr), list(shape), element_type, device)
        self._bind_output(name, target, device)

    def bind_ortvalue_output(self, name, ortvalue):
        self._bind_output(name, ortvalue._value, ortvalue._value.device)

    def _bind_output(self, name, target, device):
        if name in self._output_names:
            index = self._output_names.index(name)
            self._output_targets[index] = target
            self._output_devices[index] = device
        else:
            self._output_names.append(name)
            self._output_targets.append(target)
            self._output_devices.append(device)

    def synchronize_outputs(self):
        pass

    def clear_binding_inputs(self):
        self._inputs = {}

    def clear_binding_outputs(self):
        self._output_names = []
        self._output_targets = []
        self._output_devices = []
        self._results = None

    def _run(self, run_options):
        sess = self._session._sess
        if not self._output_names:
            self._results = sess.run_values(None, self._inputs, run_options)
            return
        # Outputs with a target are written into it by the engine (in place where it can, else copied after the
        # run); the others are allocated on their bound device.
        results = sess.run_bound(self._output_names, self._inputs, run_options, self._output_devices,
                                 self._output_targets)
        for index, target in enumerate(self._output_targets):
            if target is not None:
                results[index] = target
        self._results = results

    def get_outputs(self):
        if self._results is None:
            _raise_status(1, "IOBinding has no outputs: call run_with_iobinding first")
        return [OrtValue(value) for value in self._results]

    get_outputs_as_ortvaluevector = get_outputs

    def copy_outputs_to_cpu(self):
        return [value.numpy().copy() for value in (v._value for v in self.get_outputs())]
