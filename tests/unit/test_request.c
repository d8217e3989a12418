/*
 * The request the submit side records for job_submit/meshplan.
 */
#include "testutil.h"

static void roundtrip__every_preset(void **state)
{
    static const char *presets[] = {"llama2-7b",  "llama2-13b",    "llama2-70b", "llama3-8b",
                                    "llama3-70b", "llama3.1-405b", "gpt3-175b",  "params-only"};
    for (size_t i = 0; i < sizeof(presets) / sizeof(*presets); i++) {
        mesh_model_t m = test_preset(presets[i]), back;
        mesh_layout_t pins = test_mesh("tp=8,zero=1,mb=auto,recompute=selective,sp=off"), pback;
        mesh_error_t err;
        char req[MESH_REQUEST_MAX], d1[17], d2[17], p1[128], p2[128];
        if (mesh_request_encode(&m, &pins, req, sizeof(req), &err) < 0)
            fail_msg("%s: %s", presets[i], err.msg);
        if (mesh_request_decode(req, &back, &pback, &err) < 0)
            fail_msg("%s: %s (%s)", presets[i], err.msg, req);
        assert_string_equal(mesh_model_digest(&m, d1), mesh_model_digest(&back, d2));
        assert_string_equal(mesh_layout_format_pins(&pins, p1, sizeof(p1)),
                            mesh_layout_format_pins(&pback, p2, sizeof(p2)));
        assert_true(strlen(req) < 600);
    }
}

static void pins__format(void **state)
{
    char buf[128];
    mesh_layout_t l = test_mesh("");
    assert_string_equal(mesh_layout_format_pins(&l, buf, sizeof(buf)), "auto");
    l = test_mesh("sp=on,pp=2,tp=4");
    assert_string_equal(mesh_layout_format_pins(&l, buf, sizeof(buf)), "tp=4,pp=2,sp=on");
}

static void decode__hostile_requests_refused(void **state)
{
    static const struct {
        const char *req, *needle;
    } cases[] = {
        {"", "VERSION;PINS;SPEC"},
        {"1;auto", "VERSION;PINS;SPEC"},
        {"2;auto;{name: x, params: 1e9}", "format version '2'"},
        {"11;auto;{name: x, params: 1e9}", "format version '11'"},
        {"1;tp=2;rm -rf /;{name: x, params: 1e9}", "unknown key"},
        {"1;colour=blue;{name: x, params: 1e9}", "request: mesh: unknown key"},
        {"1;auto;{name: x, params: 1e30}", "params"},
        {"1;auto;{preset: llama3-8b}", "preset"},
        {"1;auto;{name: x, params: 1e9, evil: 1}", "unknown key 'evil'"},
        {"1;auto;{name: x, params: 1e9", "YAML"},
        {"1;auto;{name: x, arch: {layers: 2, hidden: 30, heads: 4, vocab: 10}}", "heads"},
        {"1;auto;[1, 2]", "mapping"},
        {"1;auto;{name: &a x, params: *a}", "anchors"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        mesh_model_t m;
        mesh_layout_t pins;
        mesh_error_t err;
        if (mesh_request_decode(cases[i].req, &m, &pins, &err) == 0)
            fail_msg("'%s' was accepted", cases[i].req);
        if (!strstr(err.msg, cases[i].needle))
            fail_msg("'%s': '%s' lacks '%s'", cases[i].req, err.msg, cases[i].needle);
    }
    /* oversized: refused without reading past the limit */
    char *big = malloc(3 * MESH_REQUEST_MAX);
    memset(big, 'a', 3 * MESH_REQUEST_MAX - 1);
    big[3 * MESH_REQUEST_MAX - 1] = '\0';
    memcpy(big, "1;auto;", 7);
    mesh_model_t m;
    mesh_layout_t pins;
    mesh_error_t err;
    assert_int_equal(mesh_request_decode(big, &m, &pins, &err), -1);
    assert_non_null(strstr(err.msg, "longer than"));
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(roundtrip__every_preset),
        cmocka_unit_test(pins__format),
        cmocka_unit_test(decode__hostile_requests_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
