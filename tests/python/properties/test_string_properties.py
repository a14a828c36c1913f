"""String operators on generated inputs (StringConcat, StringNormalizer, StringSplit, RegexFullMatch,
TfIdfVectorizer) against the ONNX reference: empty, whitespace-only, non-ASCII and NUL-holding strings, zero-size
and broadcast shapes, and every attribute form."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import known_differences
from property_harness import SETTINGS, allowed_dtypes, check_node, versions
from property_values import arrays, broadcastable_shapes, elements, shapes

WORDS = ["", "a", "B", "ab", "Ab", "été", "ÉTÉ", "\U0001f600", " ", "  x  y ", "a,b,,c", "A\u0000B", "\t1\n2\r"]


def strings(data, shape, label):
    """Strings that mix fixed words (separators, case pairs, non-ASCII) with arbitrary text."""
    return data.draw(arrays(object, shape, st.one_of(st.sampled_from(WORDS), elements(object))), label=label)


@pytest.mark.parametrize("opset", versions("StringConcat", first=20))
@SETTINGS
@given(data=st.data())
def test_string_concat(opset, data):
    a_shape, b_shape = data.draw(broadcastable_shapes(2, max_rank=3), label="shapes")
    check_node("StringConcat", opset, [strings(data, a_shape, "a"), strings(data, b_shape, "b")])


@pytest.mark.parametrize("opset", versions("StringNormalizer", first=10))
@SETTINGS
@given(data=st.data())
def test_string_normalizer(opset, data):
    width = data.draw(st.integers(1, 5), label="width")
    shape = data.draw(st.sampled_from([(width,), (1, width)]), label="shape")
    x = strings(data, shape, "x")
    attrs = {"case_change_action": data.draw(st.sampled_from(["NONE", "LOWER", "UPPER"]), label="action"),
             "is_case_sensitive": data.draw(st.integers(0, 1), label="is_case_sensitive")}
    stopwords = data.draw(st.lists(st.sampled_from(WORDS + x.ravel().tolist()), max_size=3), label="stopwords")
    if stopwords:
        attrs["stopwords"] = stopwords
    if data.draw(st.booleans(), label="locale given"):
        attrs["locale"] = "en_US"
    check_node("StringNormalizer", opset, [x], attrs,
               expected=known_differences.expected_for("StringNormalizer", opset, [x], attrs))


@pytest.mark.parametrize("opset", versions("StringSplit", first=20))
@SETTINGS
@given(data=st.data())
def test_string_split(opset, data):
    x = strings(data, shapes(max_rank=2, max_side=3), "x")
    attrs = {}
    delimiter = data.draw(st.sampled_from([None, "", " ", ",", ",,", "ab", "é"]), label="delimiter")
    if delimiter is not None:
        attrs["delimiter"] = delimiter
    maxsplit = data.draw(st.one_of(st.none(), st.integers(0, 3)), label="maxsplit")
    if maxsplit is not None:
        attrs["maxsplit"] = maxsplit
    check_node("StringSplit", opset, [x], attrs, outputs=2,
               expected=known_differences.expected_for("StringSplit", opset, [x], attrs))


# Patterns in the syntax RE2 and Python's re share (the reference matches with re): classes, anchors, counted and
# lazy repetition, alternation, groups, escapes and non-ASCII literals.
PATTERNS = ["", "a", "a*", "[a-z]+", "[^a-z]*", "(ab|B)+", "a{1,2}", ".*", ".+é", "\\d+", "\\s*x\\s*y\\s*",
            "[A-Za-z]+", "é|ÉTÉ", "(?i)ab", "a.?", "\\w*", "\U0001f600?", "x|"]


@pytest.mark.parametrize("opset", versions("RegexFullMatch", first=20))
@SETTINGS
@given(data=st.data())
def test_regex_full_match(opset, data):
    x = strings(data, shapes(max_rank=3, max_side=3), "x")
    pattern = data.draw(st.sampled_from(PATTERNS), label="pattern")
    attrs = {"pattern": pattern}
    check_node("RegexFullMatch", opset, [x], attrs,
               expected=known_differences.expected_for("RegexFullMatch", opset, [x], attrs))


def tfidf_pool(data, dtype, max_n):
    """Distinct n-grams for each n in [1, max_n] over a five-token vocabulary, laid out as the spec says: the pool
    holds the 1-grams' tokens, then the 2-grams', ...; ngram_counts[i] is the pool offset of the (i+1)-grams.
    Returns (vocabulary, pool, ngram_counts, number of n-grams)."""
    vocabulary = [1, 2, 3, 4, 5] if dtype != object else ["a", "b", "é", "", "dd"]
    pool, counts, total = [], [], 0
    for n in range(1, max_n + 1):
        counts.append(len(pool))
        grams = data.draw(st.lists(st.tuples(*[st.sampled_from(vocabulary)] * n), unique=True, min_size=1,
                                   max_size=4), label=f"{n}-grams")
        pool.extend(token for gram in grams for token in gram)
        total += len(grams)
    return vocabulary, pool, counts, total


@pytest.mark.parametrize("opset, dtype", [pytest.param(o, d, id=f"TfIdfVectorizer-{o}-{d}")
                                          for o in versions("TfIdfVectorizer", first=9)
                                          for d in allowed_dtypes("TfIdfVectorizer", o)])
@SETTINGS
@given(data=st.data())
def test_tfidf_vectorizer(opset, dtype, data):
    max_n = data.draw(st.integers(1, 3), label="max_gram_length")
    min_n = data.draw(st.integers(1, max_n), label="min_gram_length")
    vocabulary, pool, counts, total = tfidf_pool(data, dtype, max_n)
    indexes = data.draw(st.permutations(range(total)), label="ngram_indexes")
    mode = data.draw(st.sampled_from(["TF", "IDF", "TFIDF"]), label="mode")
    attrs = {"mode": mode, "min_gram_length": min_n, "max_gram_length": max_n,
             "max_skip_count": data.draw(st.integers(0, 2), label="max_skip_count"),
             "ngram_counts": counts, "ngram_indexes": list(indexes)}
    attrs["pool_strings" if dtype == object else "pool_int64s"] = pool
    if data.draw(st.booleans(), label="weights given"):
        attrs["weights"] = data.draw(st.lists(st.floats(0, 4, width=32), min_size=total, max_size=total),
                                     label="weights")
    shape = data.draw(st.sampled_from([(data.draw(st.integers(0, 7), label="C"),),
                                       (data.draw(st.integers(1, 3), label="N"), data.draw(st.integers(0, 6)))]),
                      label="shape")
    x = np.array(data.draw(st.lists(st.sampled_from(vocabulary + ([9] if dtype != object else ["zz"])),
                                    min_size=int(np.prod(shape)), max_size=int(np.prod(shape))), label="tokens"),
                 dtype=dtype).reshape(shape)
    check_node("TfIdfVectorizer", opset, [x], attrs,
               expected=known_differences.expected_for("TfIdfVectorizer", opset, [x], attrs))


COVERED = {"StringConcat", "StringNormalizer", "StringSplit", "RegexFullMatch", "TfIdfVectorizer"}
