/*
 * The --mesh string.  A string that pins every field must print back
 * (mesh_layout_format, the canonical MESH_PLAN form) to a string that parses
 * to the same pins.
 */
#include "fuzz.h"

static int complete(const mesh_layout_t *l)
{
    const int v[] = {l->tp,
                     l->pp,
                     l->dp,
                     l->cp,
                     l->zero,
                     l->vpp,
                     l->micro_batch,
                     (int)l->recompute,
                     l->sequence_parallel};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        if (v[i] < 0) /* MESH_FREE or MESH_AUTO */
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    mesh_layout_t l, again;
    mesh_error_t err;
    char canon[MESH_LAYOUT_STR_MAX];
    if (s && mesh_layout_parse(s, &l, &err) == 0 && complete(&l)) {
        mesh_layout_format(&l, canon, sizeof(canon));
        if (mesh_layout_parse(canon, &again, &err) < 0 || memcmp(&l, &again, sizeof(l)) != 0)
            abort();
    }
    free(s);
    return 0;
}
