// Polynomial coefficients shared by the register math of every vector tier (avx2/vector_math_avx2.h,
// avx512/vector_math_avx512.h), lowest degree first; the portable loops (vector_math_loops.h) evaluate the same
// polynomials in Horner form. Fits and their error bounds are described where each is used.
#pragma once

namespace nxrt::cpu::vector_coefficients {

// exp(r) = 1 + r + r^2 P(r) for |r| <= ln2 / 2.
inline constexpr float kExp[6] = {5.0000001201e-1f, 1.6666665459e-1f, 4.1665795894e-2f,
                                  8.3334519073e-3f, 1.3981999507e-3f, 1.9875691500e-4f};
// tanh(x) = x + x z P(z), z = x^2, for |x| < 0.625 (the sixth coefficient pads the degree-5 evaluator).
inline constexpr float kTanh[6] = {-3.33332819422e-1f, 1.33314422036e-1f, -5.37397155531e-2f,
                                   2.06390887954e-2f,  -5.70498872745e-3f, 0.0f};
// erf(x) = x P(x^2) for |x| < 1.
inline constexpr float kErfSmall[7] = {1.128379166e+00f, -3.761262879e-01f, 1.128361197e-01f, -2.685479238e-02f,
                                       5.190026131e-03f, -8.024131042e-04f, 7.897514052e-05f};
// erf(x) = 1 - exp(-x^2) Q(1 / |x|) for 1 <= |x| < 4.
inline constexpr float kErfLarge[9] = {2.469892962e-04f,  5.594154410e-01f,  3.947355943e-02f,
                                       -4.620621930e-01f, 4.749700853e-01f,  -2.106013985e-01f,
                                       -3.248635274e-03f, 4.146859818e-02f,  -1.207890115e-02f};
// Gelu (erf form) = x Phi(x) = x / (1 + 2^y), y = -log2(Phi / (1 - Phi)), which is odd in x: y = x Q(t),
// t = 2 x^2 / kGeluRange^2 - 1, for |x| <= kGeluRange. Q is a weighted minimax fit (scripts/fit_gelu_log2_odds.py;
// weight x Phi(-x) Phi(x), the sensitivity of the result to an error in y), so that in float the result is within
// 2e-7 absolute or 3 ulp (the portable 0.5 x (1 + erf) is off by ~1e-7 absolute itself). Beyond the range Gelu is
// x, or 0 within 1.1e-7.
inline constexpr float kGeluRange = 5.5f;
inline constexpr float kGeluLog2Odds[7] = {-3.6714627742767334f,  -1.1351752281188965f, 0.19248592853546143f,
                                           -0.04555555433034897f, -0.011048858053982258f, -0.0694616511464119f,
                                           -0.06237383931875229f};

}  // namespace nxrt::cpu::vector_coefficients
