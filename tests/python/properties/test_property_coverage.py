"""Coverage of the property suite: every operator nxrt registers has a property test, or is listed in PENDING
below, which may only shrink. A kernel added without a property test fails here; so does a covered op still
listed as pending. nxrt's own fused ops (com.nxrt.*) only come from its optimizer, never from a model file, and
are checked through the ops they replace."""

import nxrt._nxrt as native
import test_attention_properties
import test_binary_properties
import test_control_flow_properties
import test_conv_properties
import test_image_decoder_properties
import test_indexing_properties
import test_loss_training_properties
import test_pool_properties
import test_random_properties
import test_reduce_properties
import test_sequence_properties
import test_shape_properties
import test_string_properties
import test_unary_properties

COVERED = (test_attention_properties.COVERED | test_binary_properties.COVERED | test_control_flow_properties.COVERED
           | test_conv_properties.COVERED | test_image_decoder_properties.COVERED | test_indexing_properties.COVERED
           | test_loss_training_properties.COVERED | test_pool_properties.COVERED | test_random_properties.COVERED
           | test_reduce_properties.COVERED | test_sequence_properties.COVERED | test_shape_properties.COVERED
           | test_string_properties.COVERED | test_unary_properties.COVERED)

# Registered ops without a property test yet (domain-qualified outside ai.onnx).
PENDING = {
    "AffineGrid", "BatchNormalization", "BitCast", "BlackmanWindow", "Cast", "CastLike", "CenterCropPad",
    "Compress", "Constant", "ConstantOfShape", "ConvInteger", "CumProd", "DFT", "DepthToSpace", "DequantizeLinear",
    "DynamicQuantizeLinear", "Einsum", "EyeLike", "GRU", "GatherND", "Gemm", "GridSample", "GroupNormalization",
    "HammingWindow", "HannWindow", "InstanceNormalization", "LSTM", "LayerNormalization", "LpNormalization",
    "MatMul", "MatMulInteger", "MeanVarianceNormalization", "MelWeightMatrix", "NonZero", "OneHot", "Pad",
    "QLinearConv", "QLinearMatMul", "QuantizeLinear", "RMSNormalization", "RNN", "Range", "Resize",
    "ReverseSequence", "RoiAlign", "STFT", "Scatter", "ScatterElements", "ScatterND", "Shape", "Size",
    "SpaceToDepth", "TopK", "Unique", "Upsample", "ai.onnx.ml.ArrayFeatureExtractor", "ai.onnx.ml.Binarizer",
    "ai.onnx.ml.CastMap", "ai.onnx.ml.CategoryMapper", "ai.onnx.ml.DictVectorizer", "ai.onnx.ml.FeatureVectorizer",
    "ai.onnx.ml.Imputer", "ai.onnx.ml.LabelEncoder", "ai.onnx.ml.LinearClassifier", "ai.onnx.ml.LinearRegressor",
    "ai.onnx.ml.Normalizer", "ai.onnx.ml.OneHotEncoder", "ai.onnx.ml.SVMClassifier", "ai.onnx.ml.SVMRegressor",
    "ai.onnx.ml.Scaler", "ai.onnx.ml.TreeEnsemble", "ai.onnx.ml.TreeEnsembleClassifier",
    "ai.onnx.ml.TreeEnsembleRegressor", "ai.onnx.ml.ZipMap", "com.microsoft.Attention", "com.microsoft.BiasAdd",
    "com.microsoft.BiasGelu", "com.microsoft.BiasSoftmax", "com.microsoft.DequantizeLinear",
    "com.microsoft.DynamicQuantizeMatMul", "com.microsoft.EmbedLayerNormalization", "com.microsoft.FastGelu",
    "com.microsoft.FusedConv", "com.microsoft.FusedGemm", "com.microsoft.FusedMatMul",
    "com.microsoft.GatherBlockQuantized", "com.microsoft.Gelu", "com.microsoft.GroupQueryAttention",
    "com.microsoft.Inverse", "com.microsoft.MatMulIntegerToFloat", "com.microsoft.MatMulNBits",
    "com.microsoft.MultiHeadAttention", "com.microsoft.QAttention", "com.microsoft.QGemm",
    "com.microsoft.QLinearAdd", "com.microsoft.QLinearAveragePool", "com.microsoft.QLinearConcat",
    "com.microsoft.QLinearGlobalAveragePool", "com.microsoft.QLinearLeakyRelu", "com.microsoft.QLinearMul",
    "com.microsoft.QLinearSigmoid", "com.microsoft.QLinearSoftmax", "com.microsoft.QLinearWhere",
    "com.microsoft.QuantizeLinear", "com.microsoft.QuickGelu", "com.microsoft.Range",
    "com.microsoft.RotaryEmbedding", "com.microsoft.SkipLayerNormalization",
    "com.microsoft.SkipSimplifiedLayerNormalization", "com.microsoft.SparseAttention", "com.microsoft.Trilu",
}


def registered():
    return {op for op in native.registered_ops() if not op.startswith("com.nxrt.")}


def test_every_registered_op_has_a_property_test_or_is_pending():
    missing = registered() - COVERED - PENDING
    assert not missing, f"ops without a property test (add one, or list them in PENDING): {sorted(missing)}"


def test_pending_lists_only_registered_ops_without_a_test():
    assert not PENDING & COVERED, f"covered ops still listed as pending: {sorted(PENDING & COVERED)}"
    assert PENDING <= registered(), f"pending ops nxrt does not register: {sorted(PENDING - registered())}"
    assert COVERED <= registered(), f"tested ops nxrt does not register: {sorted(COVERED - registered())}"
