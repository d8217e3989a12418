/*
 * meshplan.so: the SPANK entry points, dispatched by context.
 *
 * slurmd loads every plugin that defines slurm_spank_init, as root, once per
 * start: there meshplan does nothing at all.
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
    mesh_error_t err;
    if (mesh_plugin_config(ac, av, &err) < 0) {
        /* In slurmstepd an error here would drain the node of a batch step
         * and be hidden from srun: keep it for task_init, where it fails the
         * step with this message. */
        if (ctx != S_CTX_REMOTE) {
            mesh_plugin_error("plugstack.conf: %s", err.msg);
            return -1;
        }
        mesh_plugin_config_error("plugstack.conf: %s", err.msg);
    }
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
