/* nxrt.genai C API: text generation over ONNX Runtime GenAI model folders (genai_config.json, the decoder ONNX
 * file it names, tokenizer.json, tokenizer_config.json), in plain C99.
 *
 * The conventions of nxrt.h hold: fallible functions return an NxrtStatus* (NULL on success, else owned by the
 * caller, released with nxrt_release_status); handles are released by their nxrt_genai_release_* function
 * (NULL is a no-op); borrowed strings and arrays stay valid until the documented next call or release. These
 * functions are not in the NxrtApi table of nxrt_api.h.
 *
 *   NxrtGenaiModel* model;
 *   nxrt_genai_create_model("phi3-int4", 0, &model);
 *   NxrtGenaiGenerator* generator;
 *   nxrt_genai_create_generator(model, "{\"max_length\": 256}", &generator);
 *   nxrt_genai_append_text(generator, "Hello");
 *   while (!nxrt_genai_is_done(generator)) {
 *     nxrt_genai_generate_next_token(generator);
 *     const char* piece;
 *     nxrt_genai_next_text(generator, &piece);
 *     fputs(piece, stdout);
 *   }
 */
#ifndef NXRT_NXRT_GENAI_H_
#define NXRT_NXRT_GENAI_H_

#include "nxrt/nxrt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct NxrtGenaiModel NxrtGenaiModel;
typedef struct NxrtGenaiGenerator NxrtGenaiGenerator;

/* Loads a model folder. threads > 0 overrides the folder's intra_op_num_threads (0: the folder's, else one per
 * core). NO_SUCHFILE names a missing genai_config.json; INVALID_ARGUMENT names a bad key or a decoder whose inputs
 * and outputs do not match the configuration. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_genai_create_model(const char* folder, int threads, NxrtGenaiModel** out);
NXRT_API void nxrt_genai_release_model(NxrtGenaiModel* model);

/* The token ids of UTF-8 text (with the special tokens of the tokenizer's template when add_special_tokens). The
 * ids array belongs to the caller: release it with nxrt_genai_release_tokens. NO_SUCHFILE without tokenizer.json. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_genai_encode(const NxrtGenaiModel* model, const char* text,
                                                       int add_special_tokens, int32_t** ids, size_t* count);
NXRT_API void nxrt_genai_release_tokens(int32_t* ids);
/* The text of token ids (special tokens dropped when skip_special_tokens); release it with
 * nxrt_genai_release_string. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_genai_decode(const NxrtGenaiModel* model, const int32_t* ids, size_t count,
                                                       int skip_special_tokens, char** text);
/* The prompt text of a conversation (a JSON list of {"role", "content"} objects) by the folder's chat template;
 * tools_json is a JSON list or NULL. Release it with nxrt_genai_release_string. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_genai_apply_chat_template(const NxrtGenaiModel* model,
                                                                    const char* messages_json, const char* tools_json,
                                                                    int add_generation_prompt, char** text);
NXRT_API void nxrt_genai_release_string(char* text);

/* A generator of one sequence with the folder's search defaults overridden by search_options_json (a JSON object
 * with onnxruntime_genai's names: max_length, min_length, do_sample, temperature, top_k, top_p, min_p,
 * repetition_penalty, random_seed, past_present_share_buffer; NULL or "" for none). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_genai_create_generator(const NxrtGenaiModel* model,
                                                                 const char* search_options_json,
                                                                 NxrtGenaiGenerator** out);
NXRT_API void nxrt_genai_release_generator(NxrtGenaiGenerator* generator);

/* Appends tokens (the prompt, or more after generation) and runs the decoder on them. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_genai_append_tokens(NxrtGenaiGenerator* generator, const int32_t* ids,
                                                              size_t count);
/* Encodes UTF-8 text with the model's tokenizer and appends it. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_genai_append_text(NxrtGenaiGenerator* generator, const char* text);
/* Picks and appends the next token. INVALID_ARGUMENT once done. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_genai_generate_next_token(NxrtGenaiGenerator* generator);
/* Cuts the sequence back to its first `length` tokens (1 <= length <= its length); generation and appends go on
 * from there, reusing the cache of the kept tokens. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_genai_rewind_to(NxrtGenaiGenerator* generator, size_t length);
/* 1 once an end-of-sequence token or max_length is reached, else 0. */
NXRT_API int nxrt_genai_is_done(const NxrtGenaiGenerator* generator);
/* The token picked last. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_genai_next_token(const NxrtGenaiGenerator* generator, int32_t* token);
/* The text the token picked last adds (possibly "": a character whose bytes are not complete waits for the next
 * tokens; special tokens add nothing). Borrowed until the next call on the generator. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_genai_next_text(NxrtGenaiGenerator* generator, const char** text);
/* All tokens of the sequence (prompt and generated). Borrowed until the next call on the generator. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_genai_sequence(const NxrtGenaiGenerator* generator, const int32_t** ids,
                                                         size_t* count);

#ifdef __cplusplus
}
#endif

#endif /* NXRT_NXRT_GENAI_H_ */
