"""Writes fuzz/op_schemas.inc: the operator schemas the kernel and graph fuzzers draw inputs and attributes from.

    .venv/bin/python fuzz/gen_op_schemas.py > fuzz/op_schemas.inc

ONNX, ai.onnx.ml and ai.onnx.preview.training schemas come from the installed `onnx` package (every version of
every op); the com.microsoft and com.nxrt ops nxrt registers are described by the table below, which lists the
attributes their create functions read. Per schema the generated table holds the input and output counts, each
input's allowed element types (a DataType bit mask), whether it takes tensors and/or sequences, which earlier
input shares its type constraint, and each attribute's name, kind and whether it is required.
"""

import sys

import onnx
from onnx import defs

# onnx.TensorProto.DataType values (also nxrt::DataType's).
ELEMENT_TYPES = {
    "float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7, "string": 8, "bool": 9,
    "float16": 10, "double": 11, "uint32": 12, "uint64": 13, "complex64": 14, "complex128": 15, "bfloat16": 16,
    "float8e4m3fn": 17, "float8e4m3fnuz": 18, "float8e5m2": 19, "float8e5m2fnuz": 20, "uint4": 21, "int4": 22,
    "float4e2m1": 23, "float8e8m0": 24, "uint2": 25, "int2": 26,
}
KIND_TENSOR = 1
KIND_SEQUENCE = 2
FLAG_OPTIONAL = 1
FLAG_VARIADIC = 2
MAX_VARIADIC = 6
MAX_OUTPUTS = 4
FLOATS = ["tensor(float)", "tensor(double)"]
F32 = ["tensor(float)"]
I64 = ["tensor(int64)"]
I32 = ["tensor(int32)"]
F16_F32 = ["tensor(float)", "tensor(float16)"]
ALL_FLOATS = ["tensor(float)", "tensor(double)", "tensor(float16)", "tensor(bfloat16)"]
HALF_FLOATS = ["tensor(float)", "tensor(float16)", "tensor(bfloat16)"]
U8 = ["tensor(uint8)"]
PACKED_INTS = ["tensor(int4)", "tensor(uint4)", "tensor(uint8)"]

CONV_ATTRIBUTES = [("auto_pad", "STRING"), ("dilations", "INTS"), ("group", "INT"), ("kernel_shape", "INTS"),
                   ("pads", "INTS"), ("strides", "INTS")]
ACTIVATION_ATTRIBUTES = [("activation", "STRING"), ("activation_params", "FLOATS")]
POOL_ATTRIBUTES = [("auto_pad", "STRING"), ("ceil_mode", "INT"), ("dilations", "INTS"), ("kernel_shape", "INTS"),
                   ("pads", "INTS"), ("storage_order", "INT"), ("strides", "INTS")]

QUANT_8 = ["tensor(uint8)", "tensor(int8)"]
QUANT_16 = QUANT_8 + ["tensor(uint16)", "tensor(int16)", "tensor(int4)", "tensor(uint4)"]
RANGE_TYPES = ["tensor(float)", "tensor(double)", "tensor(int16)", "tensor(int32)", "tensor(int64)"]
ALL_TYPES = [f"tensor({name})" for name in ("float", "float16", "double", "bfloat16", "uint8", "uint16", "uint32",
                                             "uint64", "int8", "int16", "int32", "int64", "bool")]
QLINEAR_UNARY_INPUTS = [(QUANT_8, 0, 0), (F32, 0, 0), (QUANT_8, 1, 0), (F32, 0, 0), (QUANT_8, 1, 0)]
QLINEAR_BINARY_INPUTS = [(QUANT_8, 0, 0), (F32, 0, 0), (QUANT_8, 1, 0), (QUANT_8, 0, 0), (F32, 0, 0),
                         (QUANT_8, 1, 0), (F32, 0, 0), (QUANT_8, 1, 0)]

# (domain, op, since, inputs [(types, optional, variadic)], (min_out, max_out), attributes [(name, kind)])
EXTRA_SCHEMAS = [
    ("com.microsoft", "FusedConv", 1, [(FLOATS, 0, 0), (FLOATS, 0, 0), (FLOATS, 1, 0), (FLOATS, 1, 0)], (1, 1),
     CONV_ATTRIBUTES + ACTIVATION_ATTRIBUTES),
    ("com.microsoft", "FusedGemm", 1, [(FLOATS, 0, 0), (FLOATS, 0, 0), (FLOATS, 1, 0)], (1, 1),
     [("alpha", "FLOAT"), ("beta", "FLOAT"), ("transA", "INT"), ("transB", "INT")] + ACTIVATION_ATTRIBUTES),
    ("com.nxrt", "FusedMatMul", 1, [(FLOATS, 0, 0), (FLOATS, 0, 0), (FLOATS, 1, 0)], (1, 1),
     [("alpha", "FLOAT"), ("beta", "FLOAT"), ("transA", "INT"), ("transB", "INT")] + ACTIVATION_ATTRIBUTES),
    ("com.nxrt", "FusedElementwise", 1, [(FLOATS, 0, 1)], (1, 3),
     [("ops", "STRINGS"), ("operands", "INTS"), ("results", "INTS"), ("constants", "TENSOR"),
      ("node_names", "STRINGS"), ("input_offsets", "INTS"), ("output_shape", "INTS")]),
    ("com.nxrt", "FusedConvMaxPool", 1, [(F32, 0, 0), (F32, 0, 0), (F32, 1, 0)], (1, 1),
     CONV_ATTRIBUTES + ACTIVATION_ATTRIBUTES + [("pool_pads", "INTS")]),
    ("com.nxrt", "FusedAttention", 1, [(F32, 0, 0), (F32, 0, 0), (F32, 0, 0), (F32 + ["tensor(bool)"], 1, 0)],
     (1, 1), [("scale", "FLOAT"), ("divide", "INT"), ("heads_last", "INT")]),
    ("com.nxrt", "NchwcReorderIn", 1, [(F32, 0, 0)], (1, 1), []),
    ("com.nxrt", "NchwcReorderOut", 1, [(F32, 0, 0)], (1, 1), [("channels", "INT")]),
    ("com.nxrt", "NchwcConv", 1, [(F32, 0, 0), (F32, 0, 0), (F32, 1, 0), (F32, 1, 0)], (1, 1),
     CONV_ATTRIBUTES + ACTIVATION_ATTRIBUTES + [("input_blocked", "INT")]),
    ("com.nxrt", "NchwcMaxPool", 1, [(F32, 0, 0)], (1, 1), POOL_ATTRIBUTES),
    ("com.nxrt", "NchwcGlobalAveragePool", 1, [(F32, 0, 0)], (1, 1), []),
    ("com.microsoft", "Gelu", 1, [(ALL_FLOATS, 0, 0)], (1, 1), []),
    ("com.microsoft", "FastGelu", 1, [(ALL_FLOATS, 0, 0), (ALL_FLOATS, 1, 0)], (1, 1), []),
    ("com.microsoft", "BiasGelu", 1, [(ALL_FLOATS, 0, 0), (ALL_FLOATS, 0, 0)], (1, 1), []),
    ("com.microsoft", "QuickGelu", 1, [(ALL_FLOATS, 0, 0)], (1, 1), [("alpha", "FLOAT")]),
    ("com.microsoft", "BiasAdd", 1, [(ALL_FLOATS, 0, 0)] * 3, (1, 1), []),
    ("com.microsoft", "BiasSoftmax", 1, [(ALL_FLOATS, 0, 0)] * 2, (1, 1),
     [("axis", "INT"), ("is_inner_broadcast", "INT")]),
    ("com.microsoft", "SkipLayerNormalization", 1, [(ALL_FLOATS, 0, 0)] * 3 + [(ALL_FLOATS, 1, 0)] * 2, (1, 4),
     [("epsilon", "FLOAT")]),
    ("com.microsoft", "SkipSimplifiedLayerNormalization", 1, [(ALL_FLOATS, 0, 0)] * 3 + [(ALL_FLOATS, 1, 0)],
     (1, 4), [("epsilon", "FLOAT")]),
    ("com.microsoft", "EmbedLayerNormalization", 1,
     [(I32, 0, 0), (I32, 1, 0), (ALL_FLOATS, 0, 0), (ALL_FLOATS, 0, 0), (ALL_FLOATS, 1, 0), (ALL_FLOATS, 0, 0),
      (ALL_FLOATS, 1, 0), (I32, 1, 0), (I32, 1, 0)], (2, 3), [("epsilon", "FLOAT"), ("mask_index_type", "INT")]),
    ("com.microsoft", "Attention", 1,
     [(F16_F32, 0, 0), (F16_F32, 0, 0), (F16_F32, 1, 0), (I32, 1, 0), (F16_F32, 1, 0), (F16_F32, 1, 0),
      (I32, 1, 0)], (1, 2),
     [("num_heads", "INT"), ("qkv_hidden_sizes", "INTS"), ("unidirectional", "INT"), ("scale", "FLOAT"),
      ("mask_filter_value", "FLOAT"), ("past_present_share_buffer", "INT"), ("do_rotary", "INT")]),
    ("com.microsoft", "RotaryEmbedding", 1, [(ALL_FLOATS, 0, 0), (I64, 0, 0), (ALL_FLOATS, 0, 0), (ALL_FLOATS, 0, 0)],
     (1, 1), [("interleaved", "INT"), ("is_packed_batching", "INT"), ("num_heads", "INT"),
              ("rotary_embedding_dim", "INT"), ("scale", "FLOAT")]),
    ("com.microsoft", "GroupQueryAttention", 1,
     [(ALL_FLOATS, 0, 0), (ALL_FLOATS, 1, 0), (ALL_FLOATS, 1, 0), (ALL_FLOATS, 1, 0), (ALL_FLOATS, 1, 0),
      (I32, 0, 0), (I32, 0, 0), (ALL_FLOATS, 1, 0), (ALL_FLOATS, 1, 0), (I64, 1, 0), (ALL_FLOATS, 1, 0),
      (ALL_FLOATS, 1, 0), (F32, 1, 0), (F32, 1, 0), (ALL_FLOATS, 1, 0), (ALL_FLOATS, 1, 0), (I32, 1, 0)], (1, 3),
     [("num_heads", "INT"), ("kv_num_heads", "INT"), ("scale", "FLOAT"), ("softcap", "FLOAT"),
      ("local_window_size", "INT"), ("do_rotary", "INT"), ("rotary_interleaved", "INT"), ("smooth_softmax", "INT"),
      ("causal", "INT"), ("qk_norm_epsilon", "FLOAT")]),
    ("com.microsoft", "MultiHeadAttention", 1,
     [(HALF_FLOATS, 0, 0), (HALF_FLOATS, 1, 0), (HALF_FLOATS, 1, 0), (HALF_FLOATS, 1, 0), (I32, 1, 0),
      (HALF_FLOATS, 1, 0), (HALF_FLOATS, 1, 0), (HALF_FLOATS, 1, 0), (I32, 1, 0), (I32, 1, 0)], (1, 3),
     [("num_heads", "INT"), ("scale", "FLOAT"), ("mask_filter_value", "FLOAT"), ("unidirectional", "INT")]),
    ("com.microsoft", "MatMulNBits", 1,
     [(HALF_FLOATS, 0, 0), (U8, 0, 0), (HALF_FLOATS, 0, 0), (U8 + HALF_FLOATS, 1, 0), (I32, 1, 0),
      (HALF_FLOATS, 1, 0)], (1, 1),
     [("K", "INT"), ("N", "INT"), ("bits", "INT"), ("block_size", "INT"), ("accuracy_level", "INT"),
      ("weight_prepacked", "INT")]),
    ("com.microsoft", "GatherBlockQuantized", 1,
     [(PACKED_INTS, 0, 0), (I32 + I64, 0, 0), (HALF_FLOATS, 0, 0), (PACKED_INTS, 1, 0)], (1, 1),
     [("gather_axis", "INT"), ("quantize_axis", "INT"), ("block_size", "INT"), ("bits", "INT")]),
    ("com.microsoft", "QLinearAdd", 1, QLINEAR_BINARY_INPUTS, (1, 1), []),
    ("com.microsoft", "QLinearMul", 1, QLINEAR_BINARY_INPUTS, (1, 1), []),
    ("com.microsoft", "QLinearSigmoid", 1, QLINEAR_UNARY_INPUTS, (1, 1), []),
    ("com.microsoft", "QLinearLeakyRelu", 1, QLINEAR_UNARY_INPUTS, (1, 1), [("alpha", "FLOAT")]),
    ("com.microsoft", "MatMulIntegerToFloat", 1,
     [(QUANT_8, 0, 0), (QUANT_8, 0, 0), (F16_F32, 0, 0), (F16_F32, 0, 0), (QUANT_8, 1, 0), (QUANT_8, 1, 0),
      (F16_F32, 1, 0)], (1, 1), []),
    ("com.microsoft", "DynamicQuantizeMatMul", 1,
     [(F32, 0, 0), (QUANT_8, 0, 0), (F32, 0, 0), (QUANT_8, 1, 0), (F32, 1, 0)], (1, 1), []),
    ("com.microsoft", "QLinearConcat", 1, [(F32, 0, 0), (QUANT_8, 0, 0), (QUANT_8 + F32, 0, 1)], (1, 1),
     [("axis", "INT")]),
    ("com.microsoft", "QLinearWhere", 1,
     [(["tensor(bool)"], 0, 0), (QUANT_8, 0, 0), (F32, 0, 0), (QUANT_8, 0, 0), (QUANT_8, 0, 0), (F32, 0, 0),
      (QUANT_8, 0, 0), (F32, 0, 0), (QUANT_8, 0, 0)], (1, 1), []),
    ("com.microsoft", "SparseAttention", 1,
     [(ALL_FLOATS, 0, 0), (ALL_FLOATS, 1, 0), (ALL_FLOATS, 1, 0), (ALL_FLOATS, 0, 0), (ALL_FLOATS, 0, 0),
      (I32, 0, 0), (I32, 0, 0), (I32, 0, 0), (I32, 0, 0), (ALL_FLOATS, 1, 0), (ALL_FLOATS, 1, 0)], (3, 3),
     [("num_heads", "INT"), ("kv_num_heads", "INT"), ("sparse_block_size", "INT"), ("scale", "FLOAT"),
      ("do_rotary", "INT"), ("rotary_interleaved", "INT")]),
    ("com.microsoft", "QLinearSoftmax", 1, QLINEAR_UNARY_INPUTS, (1, 1), [("axis", "INT"), ("opset", "INT")]),
    ("com.microsoft", "QLinearGlobalAveragePool", 1, QLINEAR_UNARY_INPUTS, (1, 1), [("channels_last", "INT")]),
    ("com.microsoft", "QLinearAveragePool", 1, QLINEAR_UNARY_INPUTS, (1, 1),
     [("auto_pad", "STRING"), ("ceil_mode", "INT"), ("channels_last", "INT"), ("count_include_pad", "INT"),
      ("kernel_shape", "INTS"), ("pads", "INTS"), ("strides", "INTS")]),
    ("com.microsoft", "QGemm", 1,
     [(QUANT_8, 0, 0), (F32, 0, 0), (QUANT_8, 0, 0), (QUANT_8, 0, 0), (F32, 0, 0), (QUANT_8, 1, 0), (I32, 1, 0),
      (F32, 1, 0), (QUANT_8, 1, 0)], (1, 1), [("alpha", "FLOAT"), ("transA", "INT"), ("transB", "INT")]),
    ("com.microsoft", "QAttention", 1,
     [(QUANT_8, 0, 0), (QUANT_8, 0, 0), (F16_F32, 0, 0), (F16_F32, 0, 0), (F16_F32, 0, 0), (I32, 1, 0),
      (QUANT_8, 1, 0), (QUANT_8, 1, 0), (F16_F32, 1, 0)], (1, 2),
     [("do_rotary", "INT"), ("mask_filter_value", "FLOAT"), ("num_heads", "INT"), ("past_present_share_buffer", "INT"),
      ("scale", "FLOAT"), ("unidirectional", "INT")]),
    ("com.microsoft", "FusedMatMul", 1, [(ALL_FLOATS, 0, 0)] * 2, (1, 1),
     [("alpha", "FLOAT"), ("transA", "INT"), ("transB", "INT"), ("transBatchA", "INT"), ("transBatchB", "INT")]),
    ("com.microsoft", "Trilu", 1, [(ALL_TYPES, 0, 0), (I64, 1, 0)], (1, 1), [("upper", "INT")]),
    ("com.microsoft", "Range", 1, [(RANGE_TYPES, 0, 0), (RANGE_TYPES, 0, 0), (RANGE_TYPES, 1, 0)], (1, 1), []),
    ("com.microsoft", "Inverse", 1, [(["tensor(float)", "tensor(double)", "tensor(float16)"], 0, 0)], (1, 1), []),
    ("com.microsoft", "QuantizeLinear", 1, [(HALF_FLOATS, 0, 0), (HALF_FLOATS, 0, 0), (QUANT_16, 1, 0)], (1, 1),
     [("axis", "INT")]),
    ("com.microsoft", "DequantizeLinear", 1, [(QUANT_16 + I32, 0, 0), (HALF_FLOATS, 0, 0), (QUANT_16 + I32, 1, 0)],
     (1, 1), [("axis", "INT")]),
    ("", "SimplifiedLayerNormalization", 1, [(ALL_FLOATS, 0, 0)] * 2, (1, 2),
     [("axis", "INT"), ("epsilon", "FLOAT"), ("stash_type", "INT")]),
]


def type_mask_and_kinds(type_strs):
    """(element type mask, KIND_* bits) of a list of ONNX type strings such as 'seq(tensor(float))'."""
    mask = 0
    kinds = 0
    for text in type_strs:
        while text.startswith("optional("):
            text = text[len("optional("):-1]
        kind = KIND_TENSOR
        if text.startswith("seq("):
            text = text[len("seq("):-1]
            kind = KIND_SEQUENCE
        if text.startswith("tensor(") or text.startswith("sparse_tensor("):
            element = text[text.index("(") + 1:-1]
            if element in ELEMENT_TYPES:
                mask |= 1 << ELEMENT_TYPES[element]
                kinds |= kind
    return mask, kinds or KIND_TENSOR


def attribute_kind(attr_type):
    """onnx AttributeProto.AttributeType value of a schema attribute type."""
    return int(attr_type.value) if hasattr(attr_type, "value") else int(attr_type)


def onnx_schema_rows(schema):
    constraints = {c.type_param_str: list(c.allowed_type_strs) for c in schema.type_constraints}
    inputs = []
    first_of_param = {}
    for index, formal in enumerate(schema.inputs):
        allowed = constraints.get(formal.type_str, [formal.type_str])
        mask, kinds = type_mask_and_kinds(allowed)
        flags = 0
        if formal.option == defs.OpSchema.FormalParameterOption.Optional:
            flags |= FLAG_OPTIONAL
        if formal.option == defs.OpSchema.FormalParameterOption.Variadic:
            flags |= FLAG_VARIADIC
        same_as = first_of_param.setdefault(formal.type_str, index) if formal.type_str in constraints else index
        inputs.append((mask, kinds, flags, same_as))
    min_out = schema.min_output
    max_out = min(schema.max_output, MAX_OUTPUTS)
    optional_outputs = 0
    for index, formal in enumerate(schema.outputs[:8]):
        if formal.option == defs.OpSchema.FormalParameterOption.Optional:
            optional_outputs |= 1 << index
    attributes = sorted((name, attribute_kind(attr.type), int(attr.required)) for name, attr in schema.attributes.items())
    max_in = min(schema.max_input, max(len(schema.inputs), 1) + MAX_VARIADIC - 1)
    return (schema.domain, schema.name, schema.since_version, schema.min_input, max_in, min_out, max_out,
            optional_outputs, inputs, attributes)


def extra_schema_rows(entry):
    domain, name, since, formal_inputs, (min_out, max_out), attrs = entry
    inputs = []
    for index, (types, optional, variadic) in enumerate(formal_inputs):
        mask, kinds = type_mask_and_kinds(types)
        flags = (FLAG_OPTIONAL if optional else 0) | (FLAG_VARIADIC if variadic else 0)
        inputs.append((mask, kinds, flags, 0 if types == formal_inputs[0][0] else index))
    min_in = sum(1 for _, optional, _ in formal_inputs if not optional)
    max_in = len(formal_inputs) + (MAX_VARIADIC - 1 if formal_inputs and formal_inputs[-1][2] else 0)
    attributes = sorted((attr_name, onnx.AttributeProto.AttributeType.Value(kind), 0) for attr_name, kind in attrs)
    return (domain, name, since, min_in, max_in, min_out, max_out, 0, inputs, attributes)


def main():
    schemas = [onnx_schema_rows(s) for s in defs.get_all_schemas_with_history()
               if s.domain in ("", "ai.onnx.ml", "ai.onnx.preview.training")]
    schemas += [extra_schema_rows(entry) for entry in EXTRA_SCHEMAS]
    schemas.sort(key=lambda row: (row[0], row[1], row[2]))
    out = sys.stdout
    out.write(f"// Generated by fuzz/gen_op_schemas.py from onnx {onnx.__version__}; do not edit.\n")
    out.write("// clang-format off\n")
    input_rows = []
    attribute_rows = []
    schema_rows = []
    for domain, name, since, min_in, max_in, min_out, max_out, optional_outputs, inputs, attributes in schemas:
        schema_rows.append(f'{{"{domain}", "{name}", {since}, {min_in}, {max_in}, {min_out}, {max_out}, '
                           f'{optional_outputs}, {len(input_rows)}, {len(inputs)}, {len(attribute_rows)}, '
                           f'{len(attributes)}}},')
        for mask, kinds, flags, same_as in inputs:
            input_rows.append(f"{{{mask:#x}u, {kinds}, {flags}, {same_as}}},")
        for attr_name, kind, required in attributes:
            attribute_rows.append(f'{{"{attr_name}", {kind}, {required}}},')
    out.write("constexpr SchemaInput kSchemaInputs[] = {\n" + "\n".join(input_rows) + "\n};\n")
    out.write("constexpr SchemaAttribute kSchemaAttributes[] = {\n" + "\n".join(attribute_rows) + "\n};\n")
    out.write("constexpr OpSchema kSchemas[] = {\n" + "\n".join(schema_rows) + "\n};\n")
    out.write("// clang-format on\n")


if __name__ == "__main__":
    main()
