"""ImageDecoder on generated images: random pixels of random small sizes, encoded by Pillow in each format nxrt
decodes (PNG of every colour type and bit depth 8, BMP, PPM / PGM, TIFF, lossless WebP, JPEG, JPEG 2000), decoded
to each pixel_format, against the ONNX reference (which decodes with Pillow). Lossless formats must match exactly;
lossy ones (JPEG, lossy WebP) within the integer IDCT differences that the JPEG standard allows decoders
(ISO/IEC 10918-1 Annex A: the IDCT is only specified to an accuracy, so two conforming decoders differ by a few
levels)."""

import io

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import known_differences
from property_harness import SETTINGS, check_node, describe, node_model, run_nxrt, run_reference, versions

PIL = pytest.importorskip("PIL.Image", reason="Pillow encodes the test images (requirements/test.txt)")

# format -> (Pillow format name, save options, lossless)
FORMATS = {
    "png": ("PNG", {}, True),
    "bmp": ("BMP", {}, True),
    "pnm": ("PPM", {}, True),
    "tiff": ("TIFF", {}, True),
    "webp-lossless": ("WEBP", {"lossless": True}, True),
    "jpeg": ("JPEG", {"quality": 90}, False),
    "jpeg2000": ("JPEG2000", {"irreversible": False}, True),
}
# A lossy decode may differ from Pillow's (libjpeg-turbo's IDCT and upsampling) by this many levels.
LOSSY_ATOL = 8


def encoded(pixels, mode, pillow_format, options):
    image = PIL.fromarray(pixels, mode=mode) if mode != "P" else PIL.fromarray(pixels, mode="L").convert("P")
    buffer = io.BytesIO()
    image.save(buffer, format=pillow_format, **options)
    return np.frombuffer(buffer.getvalue(), np.uint8).copy()


def source_modes(name):
    """Pillow modes each format can store: RGB everywhere, grey and alpha and palette where the format has them."""
    return {"png": ["RGB", "L", "RGBA", "LA", "P"], "bmp": ["RGB", "L", "P"], "pnm": ["RGB", "L"],
            "tiff": ["RGB", "L", "RGBA"], "webp-lossless": ["RGB", "RGBA"], "jpeg": ["RGB", "L"],
            "jpeg2000": ["RGB", "L"]}[name]


@pytest.mark.parametrize("opset", versions("ImageDecoder", first=20))
@pytest.mark.parametrize("name", list(FORMATS))
@SETTINGS
@given(data=st.data())
def test_image_decoder_matches_the_reference(opset, name, data):
    pillow_format, options, lossless = FORMATS[name]
    mode = data.draw(st.sampled_from(source_modes(name)), label="source mode")
    height, width = data.draw(st.integers(1, 9), label="height"), data.draw(st.integers(1, 9), label="width")
    channels = {"RGB": 3, "RGBA": 4, "LA": 2}.get(mode, 0)
    shape = (height, width, channels) if channels else (height, width)
    smooth = data.draw(st.booleans(), label="smooth")  # lossy codecs keep smooth images close; noise tests the rest
    if smooth and lossless is False:
        base = data.draw(st.integers(0, 255), label="level")
        pixels = np.full(shape, base, np.uint8)
    else:
        pixels = np.frombuffer(data.draw(st.binary(min_size=int(np.prod(shape)), max_size=int(np.prod(shape))),
                                         label="pixels"), np.uint8).reshape(shape).copy()
    blob = encoded(pixels, mode, pillow_format, options)
    attrs = {"pixel_format": data.draw(st.sampled_from(["RGB", "BGR", "Grayscale"]), label="pixel_format")}
    oracle = known_differences.expected_for("ImageDecoder", opset, [blob], attrs)
    if lossless:
        check_node("ImageDecoder", opset, [blob], attrs, expected=oracle)
        return
    model = node_model("ImageDecoder", opset, [blob], attrs)
    (expected,) = oracle([blob], attrs) if oracle else run_reference(model, [blob])
    (actual,) = run_nxrt(model, [blob])
    context = describe("ImageDecoder", opset, [blob], attrs) + f" ({name}, {mode}, {height}x{width})"
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, \
        f"{context}: {actual.dtype}{list(actual.shape)}, reference {expected.dtype}{list(expected.shape)}"
    worst = int(np.abs(actual.astype(np.int32) - expected.astype(np.int32)).max(initial=0))
    assert worst <= LOSSY_ATOL, f"{context}: differs by up to {worst} levels"


COVERED = {"ImageDecoder"}
