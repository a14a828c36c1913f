/* Greedy generation from an ONNX Runtime GenAI model folder with the nxrt.genai C API:
 *   genai_generate FOLDER [PROMPT]
 * Without PROMPT the prompt is the token ids 5, 17, 300 (ONNX Runtime GenAI's GPT-2 test folder has a
 * 1000-token model behind a full GPT-2 tokenizer). Prints the new text and the token ids; exits 77 (ctest's skip
 * code here) when FOLDER has no genai_config.json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nxrt/nxrt_genai.h"

static int fail(NxrtStatus* status) {
  fprintf(stderr, "%s\n", nxrt_status_string(status));
  nxrt_release_status(status);
  return 1;
}

int main(int argc, char** argv) {
  NxrtGenaiModel* model = NULL;
  NxrtGenaiGenerator* generator = NULL;
  NxrtStatus* status;
  const int32_t prompt_ids[] = {5, 17, 300};
  const int32_t* sequence = NULL;
  size_t length = 0, i;
  int generated = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: %s FOLDER [PROMPT]\n", argv[0]);
    return 2;
  }
  status = nxrt_genai_create_model(argv[1], 1, &model);
  if (status != NULL) {
    if (nxrt_status_code(status) == NXRT_NO_SUCHFILE) {
      fprintf(stderr, "skipped: %s\n", nxrt_status_message(status));
      nxrt_release_status(status);
      return 77;
    }
    return fail(status);
  }
  status = nxrt_genai_create_generator(model, "{\"max_length\": 19, \"do_sample\": false}", &generator);
  if (status == NULL) {
    status = argc > 2 ? nxrt_genai_append_text(generator, argv[2])
                      : nxrt_genai_append_tokens(generator, prompt_ids, sizeof prompt_ids / sizeof prompt_ids[0]);
  }
  while (status == NULL && !nxrt_genai_is_done(generator)) {
    const char* piece = NULL;
    status = nxrt_genai_generate_next_token(generator);
    if (status == NULL) status = nxrt_genai_next_text(generator, &piece);
    if (status == NULL) {
      fputs(piece, stdout);
      ++generated;
    }
  }
  if (status == NULL) status = nxrt_genai_sequence(generator, &sequence, &length);
  if (status != NULL) {
    nxrt_genai_release_generator(generator);
    nxrt_genai_release_model(model);
    return fail(status);
  }
  printf("\ntokens:");
  for (i = 0; i < length; ++i) printf(" %d", (int)sequence[i]);
  printf("\n");
  nxrt_genai_release_generator(generator);
  nxrt_genai_release_model(model);
  /* The sequence is the prompt and the generated tokens. */
  return generated > 0 && (argc > 2 || length == 3 + (size_t)generated) ? 0 : 1;
}
