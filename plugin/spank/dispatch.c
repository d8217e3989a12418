/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan.so: the SPANK entry points, dispatched by context.
 *
 * slurmd loads every plugin that defines slurm_spank_init, as root, once per
 * start: there meshplan does nothing at all (its failure would stop slurmd,
 * and its arguments would be those of slurmd's start, not of the steps').
 */
#include <string.h>

#include "plugin.h"

SPANK_PLUGIN(meshplan, 1)

mesh_plugin_t mesh_plugin;

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    spank_context_t ctx = spank_context();
    if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE)
        return 0;
    /* A broken configuration is logged here in slurmstepd (slurmd's log,
     * on every node that runs a step), which never fails here (a batch
     * step's node would be drained, srun would not see why): user_init
     * keeps the refusal for task_init.  srun, sbatch and salloc stop at once
     * under on_config_error=reject; else a job with meshplan's options is
     * refused with the error at init_post_opt, and the users of the others
     * hear nothing of a plugin they do not use. */
    if (mesh_plugin_config(ac, av) < 0) {
        if (ctx == S_CTX_REMOTE || mesh_plugin.config_reject)
            mesh_plugin_config_log();
        if (ctx != S_CTX_REMOTE && mesh_plugin.config_reject)
            return -1;
    }
    /* registered however broken the configuration: --model is then refused
     * with the configuration's error, not as an unknown option */
    return mesh_plugin_register_options(sp);
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    spank_context_t ctx = spank_context();
    if (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR)
        return mesh_submit_post_opt(sp);
    if (ctx == S_CTX_REMOTE)
        return mesh_stepd_post_opt(sp);
    return 0;
}

int slurm_spank_local_user_init(spank_t sp, int ac, char **av)
{
    return mesh_submit_local_user_init(sp);
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    return mesh_stepd_user_init(sp);
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    return mesh_stepd_task_init(sp);
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    if (spank_remote(sp))
        mesh_stepd_exit();
    return 0;
}
