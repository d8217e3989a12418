/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan env: one task's variables, exactly as the SPANK plugin exports
 * them.
 */
#include <stdio.h>

#include "cli.h"

/* value as one shell word in single quotes: a ' inside becomes '\'' */
static void shell_quoted(const char *value)
{
    putchar('\'');
    for (const char *c = value; *c; c++)
        if (*c == '\'')
            fputs("'\\''", stdout);
        else
            putchar(*c);
    putchar('\'');
}

/* The variables in the form asked: NAME=value lines (the plugin's bytes),
 * export lines for a shell's eval (after unset lines for ours the task is
 * not given, as the plugin removes them), or one JSON object of strings. */
static void print_env(const options_t *o, const mesh_env_t *e)
{
    for (int i = 0; o->shell && i < mesh_env_unset_count(e); i++)
        printf("unset %s\n", mesh_env_unset_name(e, i));
    if (o->json)
        putchar('{');
    for (int i = 0; i < mesh_env_count(e); i++) {
        const char *name = mesh_env_name(e, i), *value = mesh_env_value(e, i);
        if (o->json) {
            printf("%s", i ? "," : "");
            json_string(name);
            putchar(':');
            json_string(value);
        } else if (o->shell) {
            printf("export %s=", name);
            shell_quoted(value);
            putchar('\n');
        } else {
            printf("%s=%s\n", name, value);
        }
    }
    if (o->json)
        puts("}");
}

/* What the plugin does with a plan that does not fit, the CLI does too. */
int cmd_env(const options_t *o)
{
    mesh_plan_t *p;
    mesh_topo_t *t;
    mesh_error_t err;
    char visible[32];
    int rc = make_plan(o, &p, &t, NULL);
    if (rc)
        return rc;
    char msg[4096];
    mesh_verdict_t v = mesh_plan_verdict(p, o->pol.enforce, msg, sizeof(msg));
    if (v != MESH_VERDICT_RUN) {
        /* the plugin's words, line by line, as srun prints them */
        say_lines(v == MESH_VERDICT_REFUSE ? "error: " : "warning: ", msg);
        if (v == MESH_VERDICT_REFUSE) {
            mesh_plan_destroy(p);
            mesh_topo_destroy(t);
            return EXIT_NOFIT;
        }
    }
    mesh_task_t task = {
        .node = (int)o->node,
        .local = (int)o->local,
        .master_addr = o->master_addr ? o->master_addr : "localhost",
        .master_port = mesh_env_master_port((unsigned long)o->job_id, (unsigned long)o->step_id,
                                            o->pol.launch.port_lo, o->pol.launch.port_hi),
        .export_mode = o->export_mode,
        .numa_node = -1,
        .restart = o->have_restart ? &o->restart : NULL,
    };
    mesh_env_t *e = NULL;
    if (!t || mesh_env_task_topology(&task, t, o->pol.launch.bind_gpu, NULL, visible,
                                     sizeof(visible), &err) == 0) {
        e = mesh_env_create(p, &task, &err);
        if (!e)
            mesh_error_prefix(&err, "--node %d --local %d", task.node, task.local);
    }
    mesh_plan_destroy(p);
    mesh_topo_destroy(t);
    if (!e)
        return bad("%s", err.msg);
    print_env(o, e);
    mesh_env_destroy(e);
    return EXIT_FITS;
}
