"""Fits kGeluLog2Odds (src/ep/cpu/microkernels/vector_math_coefficients.h).

Gelu(x) = x / (1 + 2^y) with y = -log2(Phi(x) / (1 - Phi(x))), odd in x, written as y = x Q(t) with
t = 2 x^2 / R^2 - 1 on |x| <= R. Q is fitted by Lawson's iteratively reweighted least squares towards the weighted
minimax solution, the weight being ln2 * x Phi(-x) Phi(x): how much an error in y moves x Phi(x). Prints the
coefficients (float32) and the weighted error; needs numpy and scipy.
"""
import numpy as np
from scipy.special import log_ndtr, ndtr

RANGE = 5.5
DEGREE = 6


def main():
    x = np.linspace(1e-6, RANGE, 40001)
    tail = ndtr(-x)
    y = -(log_ndtr(x) - log_ndtr(-x)) / np.log(2.0)
    weight = np.log(2.0) * x * tail * (1.0 - tail)
    t = 2.0 * x * x / (RANGE * RANGE) - 1.0
    basis = np.vander(t, DEGREE + 1, increasing=True) * x[:, None]
    lawson = np.full_like(x, 1.0 / x.size)
    for _ in range(300):
        row_weight = weight * np.sqrt(lawson)
        coefficients, *_ = np.linalg.lstsq(basis * row_weight[:, None], y * row_weight, rcond=None)
        error = np.abs(basis @ coefficients - y) * weight
        lawson = lawson * error
        lawson /= lawson.sum()
    print(f"weighted max error {error.max():.3g}")
    print(", ".join(f"{float(np.float32(c))!r}f" for c in coefficients))


if __name__ == "__main__":
    main()
