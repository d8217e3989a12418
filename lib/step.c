/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decisions about a job step that every front end makes the same way
 * (see step.h): its shape, its GPUs, its nodes' likeness and the
 * allocation a node plans for.  Pure: numbers and strings in, a shape or an
 * allocation and one message out.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "meshplan/step.h"

#define MESH_TRES_MAX (1L << 20) /* GPUs one TRES string or node may ask for */

long mesh_tres_gpus(const char *s)
{
    char buf[512];
    long total = 0;
    if (!s || !*s)
        return 0;
    if (mesh_strlcpy(buf, s, sizeof(buf)) < 0)
        return -1;
    for (char *save, *t = strtok_r(buf, ",;", &save); t; t = strtok_r(NULL, ",;", &save)) {
        if (strncmp(t, "gres:", 5) == 0 || strncmp(t, "gres/", 5) == 0)
            t += 5;
        if (strncmp(t, "gpu", 3) != 0 || (t[3] && t[3] != ':' && t[3] != '='))
            continue;
        /* Slurm's gpu[:type][:count] (or gpu=count): a last field that is
         * not a number is a type, and the count is one */
        const char *n = strrchr(t, ':'), *eq = strrchr(t, '=');
        n = eq > n ? eq : n;
        char *end;
        long v = n ? strtol(n + 1, &end, 10) : 1;
        if (n && (end == n + 1 || *end))
            v = 1;
        if (v < 0 || v > MESH_TRES_MAX)
            return -1;
        total += v;
    }
    return total > MESH_TRES_MAX ? -1 : total;
}

/* Slurm counts memory in megabytes of 2^20 bytes. */
static double host_memory(long mib)
{
    return mib > 0 ? (double)mib * 1048576.0 : 0;
}

/* Slurm gives each task one GPU of the step; a node whose count differs
 * would leave GPUs idle or share one. */
static int one_gpu_per_task(mesh_error_t *err, long tasks, long gpus)
{
    return mesh_error_set(
        err,
        "%ld tasks per node but %ld GPUs in the step on this node: meshplan "
        "plans one GPU per task (use --gpus-per-node=%ld, or --ntasks-per-node=%ld)",
        tasks, gpus, tasks, gpus);
}

/* The batch (or interactive) step reports no nodes or tasks of its own: it
 * is the launcher, planned as node 0 of the whole job. */
static int job_launcher(const mesh_step_counts_t *c, mesh_step_t *s, mesh_error_t *err)
{
    long gpus = c->gpus_on_node > 0 ? c->gpus_on_node : c->ntasks_per_node;
    if (c->nodes <= 0 || gpus <= 0 || c->nodes > INT_MAX || gpus > INT_MAX)
        return mesh_error_set(err, "the job's nodes and GPUs per node are unknown in this step "
                                   "(give --gpus-per-node or --ntasks-per-node)");
    s->nodes = (int)c->nodes;
    s->tasks_per_node = 1;
    s->gpus_per_node = (int)gpus;
    return 0;
}

int mesh_step_shape(const mesh_step_counts_t *c, mesh_launch_t launch, mesh_step_t *s,
                    mesh_error_t *err)
{
    memset(s, 0, sizeof(*s));
    s->host_memory = host_memory(c->mem_per_node);
    if (launch == MESH_LAUNCH_JOB)
        return job_launcher(c, s, err);
    if (c->nodes <= 0 || c->tasks <= 0 || c->nodes > INT_MAX || c->tasks > INT_MAX || c->node < 0 ||
        c->node >= c->nodes || c->local_tasks > INT_MAX)
        return mesh_error_set(err, "cannot read the step's nodes and tasks from Slurm");
    long here = c->local_tasks >= 0 ? c->local_tasks : c->tasks / c->nodes;
    if (c->tasks % c->nodes || here * c->nodes != c->tasks) {
        if (c->local_tasks < 0)
            return mesh_error_set(err,
                                  "%ld tasks on %ld nodes: a 3D layout needs the same number of "
                                  "tasks on every node (use --ntasks-per-node)",
                                  c->tasks, c->nodes);
        return mesh_error_set(err,
                              "%ld tasks on %ld nodes (%ld here): a 3D layout needs the same "
                              "number of tasks on every node (use --ntasks-per-node)",
                              c->tasks, c->nodes, here);
    }
    s->nodes = (int)c->nodes;
    s->node = (int)c->node;
    s->tasks_per_node = (int)here;
    s->gpus_per_node = (int)here;
    long gpus = c->gpus_on_node > 0 && c->gpus_on_node <= INT_MAX ? c->gpus_on_node : 0;
    if (launch != MESH_LAUNCH_TORCHRUN)
        /* Slurm's count of the step's GPUs here, when it has any: a
         * topology checks the same, but a node without one must too */
        return gpus && gpus != here ? one_gpu_per_task(err, here, gpus) : 0;
    if (c->local_tasks >= 0 && c->local_tasks != 1)
        return mesh_error_set(err,
                              "--mesh-export=torchrun runs one launcher task per node, not %ld "
                              "(use --ntasks-per-node=1)",
                              c->local_tasks);
    s->gpus_per_node = (int)gpus; /* 0: the node's topology tells */
    return 0;
}

/* GPUs per node of a job: asked per node, per job (split evenly) or per
 * task; 0 when none of them is.  -1 with err when it cannot be planned. */
static long job_gpus_per_node(const mesh_job_counts_t *c, const mesh_step_t *s, mesh_error_t *err)
{
    long per_node = mesh_tres_gpus(c->tres_per_node), per_job = mesh_tres_gpus(c->tres_per_job),
         per_task = mesh_tres_gpus(c->tres_per_task);
    if (per_node < 0 || per_job < 0 || per_task < 0)
        return mesh_error_set(err, "cannot read the job's GPU request");
    long gpn = per_node;
    if (!gpn && per_job > 0) {
        if (per_job % s->nodes)
            return mesh_error_set(err,
                                  "--gpus=%ld does not split evenly over %d nodes: give "
                                  "--gpus-per-node",
                                  per_job, s->nodes);
        gpn = per_job / s->nodes;
    }
    if (!gpn && per_task > 0 && s->tasks_per_node)
        gpn = per_task * s->tasks_per_node;
    if (gpn > MESH_TRES_MAX)
        return mesh_error_set(err, "%ld GPUs per node is not a request meshplan can plan", gpn);
    return gpn;
}

int mesh_job_shape(const mesh_job_counts_t *c, mesh_step_t *s, mesh_error_t *err)
{
    memset(s, 0, sizeof(*s));
    s->host_memory = host_memory(c->mem_per_node);
    long tasks = c->tasks > 0 ? c->tasks : 0, nodes = c->nodes > 0 ? c->nodes : 0;
    long tpn = c->tasks_per_node > 0 ? c->tasks_per_node : 0;
    if (!nodes && tpn && tasks)
        nodes = tasks / tpn;
    if (!nodes)
        nodes = 1;
    if (!tpn && tasks && tasks % nodes == 0)
        tpn = tasks / nodes;
    s->nodes = (int)nodes;
    s->tasks_per_node = (int)tpn;
    long gpn = job_gpus_per_node(c, s, err);
    if (gpn < 0)
        return -1;
    if (!gpn) {
        if (mesh_tres_gpus(c->tres_per_socket) > 0)
            return 1; /* GPUs per socket: the nodes know their sockets */
        return mesh_error_set(err, "--model asks for a layout, but the job requests no GPUs (give "
                                   "--gpus-per-node=N)");
    }
    s->gpus_per_node = (int)gpn;
    if (s->tasks_per_node && s->tasks_per_node != s->gpus_per_node && s->tasks_per_node != 1)
        return mesh_error_set(err,
                              "%d tasks per node but %d GPUs per node: meshplan plans one GPU "
                              "per task (or one torchrun per node)",
                              s->tasks_per_node, s->gpus_per_node);
    return 0;
}

int mesh_nodes_alike(int n, const char *const *hosts, const char *const *gpus, mesh_error_t *err)
{
    if (n <= 0 || !gpus[0])
        return 0; /* nothing to compare with: the nodes judge for themselves */
    for (int i = 1; i < n; i++)
        if (gpus[i] && strcmp(gpus[i], gpus[0]) != 0)
            return mesh_error_set(err,
                                  "node %s has %s but the step's first node %s has %s: one layout "
                                  "is planned for all nodes, so they must be alike (choose nodes "
                                  "with -w, --constraint or a partition)",
                                  hosts[i], gpus[i], hosts[0], gpus[0]);
    return 0;
}

/* on_topology_error=fallback, with a GPU in the policy to fall back on. */
static int falls_back(const mesh_policy_t *pol)
{
    return pol->launch.topology_fallback && (pol->assume.gpu[0] || pol->assume.gpu_mem > 0);
}

int mesh_step_fallback(const mesh_policy_t *pol, mesh_error_t *err)
{
    char why[MESH_ERROR_MAX];
    mesh_strlcpy(why, err->msg, sizeof(why));
    if (falls_back(pol)) {
        mesh_error_set(err, "%s; planning for the policy's %s instead (on_topology_error=fallback)",
                       why, pol->assume.gpu[0] ? pol->assume.gpu : "gpu_mem");
        return 1;
    }
    return mesh_error_set(
        err, "%s (an admin can set on_topology_error=fallback, with gpu=, to plan without it)",
        why);
}

/* The policy's own GPU (gpu= or gpu_mem=), for s's nodes and GPUs. */
static int policy_alloc(const mesh_policy_t *pol, const mesh_step_t *s, mesh_alloc_t *a,
                        mesh_error_t *err)
{
    if (mesh_policy_alloc(&pol->assume, NULL, 0, 0, s->nodes, s->gpus_per_node, a, err) < 0)
        return -1;
    a->host_memory = s->host_memory;
    return 0;
}

int mesh_step_alloc(const mesh_policy_t *pol, const mesh_topo_t *t, int launcher, int by_island,
                    mesh_step_t *s, mesh_alloc_t *a, mesh_error_t *err)
{
    if (!t && s->gpus_per_node <= 0)
        return mesh_error_set(
            err, "--mesh-export=torchrun needs the node's GPUs (give --gpus-per-node)");
    if (!t)
        return policy_alloc(pol, s, a, err);
    if (mesh_topo_alloc(t, &pol->assume, s->nodes, by_island, a, err) < 0)
        return -1;
    if (falls_back(pol)) {
        /* A node that cannot read its topology plans for the policy's GPU:
         * so do all the others, or two nodes could plan two layouts.  The
         * topology still places the tasks; it must show the policy's GPU. */
        if (pol->assume.gpu[0] && strcmp(a->gpu.name, pol->assume.gpu) != 0)
            return mesh_error_set(
                err,
                "this node has %s GPUs but the policy plans for %s "
                "(on_topology_error=fallback plans every node for gpu=): fix gpu=",
                a->gpu.name, pol->assume.gpu);
        if (s->gpus_per_node <= 0)
            s->gpus_per_node = a->gpus_per_node;
        return policy_alloc(pol, s, a, err);
    }
    if (s->tasks_per_node == 0 || (launcher && s->tasks_per_node == 1))
        s->gpus_per_node = a->gpus_per_node; /* one launcher for all the node's GPUs */
    else if (a->gpus_per_node != s->tasks_per_node)
        return one_gpu_per_task(err, s->tasks_per_node, a->gpus_per_node);
    a->host_memory = s->host_memory;
    return 0;
}

int mesh_step_gpu_list(const char *list, const char *var, int *pos, int max, mesh_error_t *err)
{
    char buf[256];
    int n = 0;
    if (!list)
        return 0; /* none given: all of the node's */
    if (mesh_strlcpy(buf, list, sizeof(buf)) < 0)
        return mesh_error_set(err, "%s: longer than %d characters", var, (int)sizeof(buf) - 1);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        /* INDEX or LO-HI, digits only ("-", "0-" or "+1" are no index) */
        char *end = item;
        long lo = isdigit((unsigned char)*item) ? strtol(item, &end, 10) : -1, hi = lo;
        if (lo >= 0 && *end == '-')
            hi = isdigit((unsigned char)end[1]) ? strtol(end + 1, &end, 10) : -1;
        if (*end || lo < 0 || hi < lo || hi >= MESH_TOPO_MAX_GPUS)
            return mesh_error_set(err, "%s: cannot read '%.40s'", var, item);
        for (long i = lo; i <= hi; i++) {
            if (n == max)
                return mesh_error_set(err, "%s: more than %d GPUs", var, max);
            pos[n++] = (int)i;
        }
    }
    return n;
}

int mesh_step_topology(const mesh_policy_t *pol, mesh_topo_t *t, const int *pos, int n,
                       mesh_error_t *err)
{
    int sel[MESH_TOPO_MAX_GPUS];
    if (n <= 0 || mesh_topo_gpu_count(t) == 0)
        return 0;
    if (n > MESH_TOPO_MAX_GPUS)
        return mesh_error_set(err, "more than %d GPUs in the step", MESH_TOPO_MAX_GPUS);
    memcpy(sel, pos, sizeof(int) * (size_t)n);
    if (pol->launch.gpu_order_minor && mesh_topo_minors_to_positions(t, NULL, sel, n, err) < 0)
        return -1;
    return mesh_topo_select(t, sel, n, err);
}

int mesh_step_topology_file(const mesh_policy_t *pol, const char *host, char *buf, size_t len)
{
    const char *pat = pol->launch.topology_xml, *n = strstr(pat, "%n");
    int w = n ? snprintf(buf, len, "%.*s%s%s", (int)(n - pat), pat, host, n + 2)
              : snprintf(buf, len, "%s", pat);
    return w > 0 && (size_t)w < len ? 0 : -1;
}
