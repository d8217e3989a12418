/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/yamlread.c: the hardened YAML event reader the spec, the policy and
 * the calibration share (no anchors, aliases or tags, bounded scalars), the
 * end of their one document, the bounded reader of regular files, and the
 * scan for a top-level key that on_config_error needs where the YAML does
 * not parse.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "yamlread.h"

/* Every event of buf; -1 with err at the first the reader refuses. */
static int read_all(const char *buf, mesh_error_t *err)
{
    yaml_parser_t p;
    yaml_event_t ev;
    int rc = 0;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, strlen(buf));
    for (int done = 0; !done;) {
        if (mesh_yaml_next(&p, &ev, "t.yaml", err) < 0) {
            rc = -1;
            break;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

static void events__hostile_refused(void **state)
{
    (void)state;
    mesh_error_t err;
    assert_int_equal(read_all("a: 1\nb: [x, y]\n", &err), 0);
    assert_int_equal(read_all("a: &x 1\nb: *x\n", &err), -1);
    assert_non_null(strstr(err.msg, "t.yaml:"));
    assert_int_equal(read_all("a: !!str 1\n", &err), -1);
    char big[MESH_YAML_SCALAR_MAX + 16];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    char doc[sizeof(big) + 8];
    snprintf(doc, sizeof(doc), "a: %s\n", big);
    assert_int_equal(read_all(doc, &err), -1);
}

/* A tag changes what a node means wherever it stands: on a sequence and
 * on a map as on a scalar, each refused with the line it is on. */
static void events__tag_refused_on_every_node(void **state)
{
    (void)state;
    const char *docs[] = {"a: 1\nb: !!seq [x, y]\n", "a: 1\nb: !!map {x: 1}\n",
                          "a: 1\nb: !!str x\n"};
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        mesh_error_t err = {0};
        assert_int_equal(read_all(docs[i], &err), -1);
        assert_string_equal(err.msg, "t.yaml:2: tags (!name) are not allowed");
    }
}

static void files__regular_and_bounded(void **state)
{
    (void)state;
    char path[] = "/tmp/meshplan-yamlread.XXXXXX";
    int fd = mkstemp(path);
    mesh_error_t err;
    size_t n;
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "abcdef", 6), 6);
    close(fd);
    char *buf = mesh_read_regular_file(path, "spec", 64, &n, &err);
    assert_non_null(buf);
    assert_int_equal(n, 6);
    assert_string_equal(buf, "abcdef");
    free(buf);
    /* an errno of EINTR left by an earlier call (slurmstepd's signals) is
     * no interrupted read: the end of the file still ends it */
    errno = EINTR;
    buf = mesh_read_regular_file(path, "spec", 64, &n, &err);
    assert_non_null(buf);
    assert_int_equal(n, 6);
    free(buf);
    /* the limit itself is allowed: a file of exactly cap bytes is read
     * whole, one byte more is refused */
    buf = mesh_read_regular_file(path, "spec", 6, &n, &err);
    assert_non_null(buf);
    assert_int_equal(n, 6);
    assert_string_equal(buf, "abcdef");
    free(buf);
    assert_null(mesh_read_regular_file(path, "spec", 5, &n, &err));
    assert_null(mesh_read_regular_file(path, "spec", 3, &n, &err)); /* larger than the bound */
    char want[MESH_ERROR_MAX];
    snprintf(want, sizeof(want), "spec '%s' is larger than the 3-byte limit", path);
    assert_string_equal(err.msg, want);
    assert_null(mesh_read_regular_file("/tmp", "spec", 64, &n, &err)); /* a directory */
    unlink(path);
}

/* on_config_error's word, found on its line even where YAML would not parse. */
static void top_line__key_value_comment_quotes(void **state)
{
    (void)state;
    char w[32];
    const char *l = "on_config_error: reject  # comment";
    assert_int_equal(mesh_yaml_top_line(l, l + strlen(l), "on_config_error", w, sizeof(w)), 1);
    assert_string_equal(w, "reject");
    l = "on_config_error:  \"allow\"";
    assert_int_equal(mesh_yaml_top_line(l, l + strlen(l), "on_config_error", w, sizeof(w)), 1);
    assert_string_equal(w, "allow");
    l = "on_config_error_x: reject";
    assert_int_equal(mesh_yaml_top_line(l, l + strlen(l), "on_config_error", w, sizeof(w)), 0);
    l = "  on_config_error: reject"; /* nested: not the top level */
    assert_int_equal(mesh_yaml_top_line(l, l + strlen(l), "on_config_error", w, sizeof(w)), 0);
    l = "on_config_error: a#b";
    assert_int_equal(mesh_yaml_top_line(l, l + strlen(l), "on_config_error", w, sizeof(w)), 1);
    assert_string_equal(w, "a#b"); /* '#' starts a comment only after a blank */
}

/* mesh_yaml_end after a document's top mapping of buf: its result, with
 * err's message. */
static int end_of(const char *buf, mesh_error_t *err)
{
    yaml_parser_t p;
    yaml_event_t ev;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, strlen(buf));
    /* the stream, the document and the mapping's start, a: 1 and its end */
    for (int i = 0; i < 6; i++) {
        assert_int_equal(mesh_yaml_next(&p, &ev, "t.yaml", err), 0);
        yaml_event_delete(&ev);
    }
    int rc = mesh_yaml_end(&p, "t.yaml", "one document, please", err);
    yaml_parser_delete(&p);
    return rc;
}

/* After the mapping: the end (with or without "..."), a second document
 * refused with its line and the caller's words, and a syntax error there
 * the parser's, not a second document. */
static void end__one_document_or_the_parsers_error(void **state)
{
    (void)state;
    mesh_error_t err = {0};
    assert_int_equal(end_of("a: 1\n", &err), 0);
    assert_int_equal(end_of("a: 1\n...\n", &err), 0);
    assert_int_equal(end_of("a: 1\n---\nb: 2\n", &err), -1);
    assert_string_equal(err.msg, "t.yaml:2: one document, please"); /* its "---" */
    assert_int_equal(end_of("{a: 1}\n}\n", &err), -1);
    assert_non_null(strstr(err.msg, "t.yaml:2: YAML syntax error"));
    assert_int_equal(end_of("a: 1\n# the end\n", &err), 0);
    assert_int_equal(end_of("a: 1\n...\n---\nb: 2\n", &err), -1); /* ended, then another */
    assert_string_equal(err.msg, "t.yaml:3: one document, please");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(events__hostile_refused),
        cmocka_unit_test(events__tag_refused_on_every_node),
        cmocka_unit_test(files__regular_and_bounded),
        cmocka_unit_test(top_line__key_value_comment_quotes),
        cmocka_unit_test(end__one_document_or_the_parsers_error),
    };
    return cmocka_run_group_tests_name("yamlread", tests, NULL, NULL);
}
