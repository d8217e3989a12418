/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The controller's judgement of a job at submission (see submit.h): moved
 * here from job_submit/meshplan so that the CLI's --partition asks the
 * same function, and gets the same verdict in the same words.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "meshplan/plan.h"
#include "meshplan/submit.h"

/* The allocation of policy entry q (NULL: none, the policy's own). */
static int entry_alloc(const mesh_policy_t *pol, const mesh_partition_t *q, const mesh_step_t *s,
                       mesh_alloc_t *a, mesh_error_t *err)
{
    if (mesh_policy_alloc(&pol->assume, q && q->gpu[0] ? q->gpu : NULL, q ? q->gpu_mem : 0,
                          q ? q->island : 0, s->nodes, s->gpus_per_node, a, err) < 0)
        return -1;
    a->host_memory = s->host_memory;
    return 0;
}

int mesh_partition_alloc(const mesh_policy_t *pol, const char *name, const mesh_step_t *s,
                         mesh_alloc_t *a, mesh_error_t *err)
{
    return entry_alloc(pol, mesh_policy_partition(pol, name && *name ? name : NULL), s, a, err);
}

/* Whether the job fits the partition the policy describes as q: RUN if it
 * does, or, unjudged (*judged 0, why in why), if the policy gives it no
 * GPU; else the verdict enforce gives, with the reason in why. */
static mesh_verdict_t judge_entry(const mesh_policy_t *pol, const mesh_partition_t *q,
                                  const mesh_model_t *m, const mesh_layout_t *pins,
                                  const mesh_step_t *s, int *judged, char *why, size_t len)
{
    mesh_alloc_t a;
    mesh_error_t err;
    mesh_verdict_t nofit =
        pol->enforce == MESH_ENFORCE_REJECT ? MESH_VERDICT_REFUSE : MESH_VERDICT_WARN;
    *judged = 1;
    why[0] = '\0';
    if (entry_alloc(pol, q, s, &a, &err) < 0) {
        *judged = 0; /* the nodes will judge it at launch */
        snprintf(why, len, "%s", err.msg);
        return MESH_VERDICT_RUN;
    }
    if (q && q->nodes && s->nodes > q->nodes)
        return snprintf(why, len,
                        "the job asks for %d nodes but partition %s has %d: plan for at most %d "
                        "(meshplan plan --model ... --nodes %d shows what fits)",
                        s->nodes, q->name, q->nodes, q->nodes, q->nodes),
               nofit;
    /* most jobs fit: a first-fit search says so without pricing every
     * layout; only a refusal needs the whole plan, for its explanation */
    if (mesh_plan_any_fits(m, &a, pins, &pol->assume))
        return MESH_VERDICT_RUN;
    mesh_plan_t *p = mesh_plan_create(m, &a, pins, &pol->assume, &err);
    if (!p)
        return snprintf(why, len, "%s", err.msg), nofit;
    mesh_verdict_t v = mesh_plan_verdict(p, pol->enforce, why, len);
    mesh_plan_destroy(p);
    return v;
}

/* The job's name for the partition at list[0..k) into out; "" when it is
 * longer than any policy entry's name could be. */
static void part_name(const char *list, size_t k, char *out, size_t len)
{
    out[0] = '\0';
    if (k < len)
        snprintf(out, len, "%.*s", (int)k, list);
}

mesh_verdict_t mesh_submit_judge(const mesh_policy_t *pol, const char *partitions,
                                 const mesh_model_t *m, const mesh_layout_t *pins,
                                 const mesh_step_t *s, mesh_submit_t *out)
{
    memset(out, 0, sizeof(*out));
    if (!partitions)
        partitions = "";
    part_name(partitions, strcspn(partitions, ","), out->partition, sizeof(out->partition));
    out->entry = mesh_policy_partition(pol, out->partition[0] ? out->partition : NULL);
    if (pol->enforce == MESH_ENFORCE_OFF)
        return out->verdict = MESH_VERDICT_RUN;
    /* A job naming several partitions runs in whichever starts it first, so
     * it is refused only when it fits none of them, with the first's reason.
     * Names share policy entries (all unknown ones share `default`): each
     * entry is planned once, so a long list costs string compares only. */
    char why[MESH_SUBMIT_MSG_MAX], other[MESH_SUBMIT_MSG_MAX];
    const mesh_partition_t *judged[MESH_PARTITIONS_MAX + 1];
    int n = 0, n_judged = 0;
    mesh_verdict_t first = MESH_VERDICT_RUN;
    for (const char *list = partitions;; list++) {
        size_t k = strcspn(list, ",");
        char part[sizeof(out->partition)];
        part_name(list, k, part, sizeof(part));
        const mesh_partition_t *q = mesh_policy_partition(pol, k ? part : NULL);
        int seen = 0, was_judged;
        for (int i = 0; i < n_judged; i++)
            seen |= judged[i] == q;
        if (!seen && n_judged < MESH_ARRAY_LEN(judged)) {
            char *reason = n_judged ? other : why;
            mesh_verdict_t v = judge_entry(pol, q, m, pins, s, &was_judged, reason, sizeof(why));
            if (v == MESH_VERDICT_RUN) {
                out->judged = was_judged;
                out->index = n;
                mesh_strlcpy(out->partition, part, sizeof(out->partition));
                out->entry = q;
                if (!was_judged)
                    mesh_strlcpy(out->msg, reason, sizeof(out->msg));
                return out->verdict = MESH_VERDICT_RUN;
            }
            if (!n_judged)
                first = v;
            judged[n_judged++] = q;
        }
        n++;
        list += k;
        if (*list != ',')
            break;
    }
    out->judged = 1;
    char *msg = NULL;
    if (n > 1) {
        mesh_buf_t b;
        mesh_buf_init(&b);
        mesh_buf_printf(&b,
                        "in partition %.*s: %s\n(it fits none of the %d partitions the job names)",
                        (int)strcspn(partitions, ","), partitions, why, n);
        msg = mesh_buf_take(&b); /* NULL: out of memory, and the reason alone */
    }
    mesh_strlcpy(out->msg, msg ? msg : why, sizeof(out->msg));
    free(msg);
    return out->verdict = first;
}
