/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A hand-made batch submission through libslurm, carrying whatever control
 * environment entry the test gives it: what a user could send without
 * meshplan's sbatch options.
 *
 *   submit-raw 'MESHPLAN_REQUEST=...' [NODES GPUS_PER_NODE]
 *
 * Prints the controller's answer; exits 0 if the job was queued (and
 * cancels nothing: the caller does), 1 if it was refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm_errno.h>

#include "../../plugin/slurm_compat.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: submit-raw NAME=VALUE [NODES GPUS_PER_NODE]\n");
        return 2;
    }
    job_desc_msg_t d;
    submit_response_msg_t *resp = NULL;
    char *env[] = {argv[1]}, *job_env[] = {"PATH=/usr/bin:/bin", NULL}, cwd[4096], tres[64];
    int gpus = argc > 3 ? atoi(argv[3]) : 8;
    /* required before any other call since 22.05; 25.11 crashes without it */
    slurm_init(NULL);
    slurm_init_job_desc_msg(&d);
    d.name = "submit-raw";
    d.script = "#!/bin/sh\ntrue\n";
    d.min_nodes = argc > 2 ? (uint32_t)atoi(argv[2]) : 1;
    d.ntasks_per_node = (uint16_t)gpus;
    snprintf(tres, sizeof(tres), "gres:gpu:%d", gpus);
    d.tres_per_node = tres;
    d.user_id = getuid();
    d.group_id = getgid();
    d.work_dir = getcwd(cwd, sizeof(cwd));
    d.std_out = "/dev/null";
    d.environment = job_env;
    d.env_size = 1;
    d.spank_job_env = env;
    d.spank_job_env_size = 1;
    d.priority = 0; /* held: the test only wants the controller's verdict */
    if (slurm_submit_batch_job(&d, &resp) != SLURM_SUCCESS) {
        printf("refused: %s\n", slurm_strerror(errno));
        return 1;
    }
    printf("queued: job %u%s%s\n", MESH_SUBMIT_JOB_ID(resp), resp->job_submit_user_msg ? ": " : "",
           resp->job_submit_user_msg ? resp->job_submit_user_msg : "");
    slurm_free_submit_response_response_msg(resp);
    slurm_fini();
    return 0;
}
