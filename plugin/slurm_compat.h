/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The differences between the Slurm releases meshplan builds against, 22.05
 * to 25.11, each in one place with the release that made it.  The plugin
 * files use the names defined here and never test SLURM_VERSION_NUMBER
 * themselves.  `make check-slurm-headers` compiles the plugins against every
 * release's public headers (../shared/slurm/headers).
 *
 * Not a difference of the headers, but of the loader (src/common/plugin.c,
 * _verify_syms): a SPANK plugin must match the running Slurm's major.minor,
 * any other plugin (job_submit/meshplan) its major.minor.micro.  Hence one
 * meshplan.so per Slurm series and a job_submit_meshplan.so per release.
 */
#ifndef MESHPLAN_SLURM_COMPAT_H
#define MESHPLAN_SLURM_COMPAT_H

#include <slurm/slurm.h>
#include <slurm/slurm_version.h>

#define MESH_SLURM_SINCE(major, minor) (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(major, minor, 0))

/* 23.11: hostlist_t became the struct itself; the API takes hostlist_t *. */
#if MESH_SLURM_SINCE(23, 11)
typedef hostlist_t *mesh_hostlist_t;
#else
typedef hostlist_t mesh_hostlist_t;
#endif

/* 25.11: a submission's answer names its job by a step id (tests/cluster's
 * submit-raw reads it). */
#if MESH_SLURM_SINCE(25, 11)
#define MESH_SUBMIT_JOB_ID(resp) ((resp)->step_id.job_id)
#else
#define MESH_SUBMIT_JOB_ID(resp) ((resp)->job_id)
#endif

#endif
