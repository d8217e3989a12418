/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan ranks: the rank map of the planned layout.
 */
#include "cli.h"

/* The rank map; when nothing fits, it is the closest layout's, and why
 * follows on stderr, as plan explains it. */
int cmd_ranks(const options_t *o)
{
    return report(o, mesh_report_ranks_text, mesh_report_ranks_json, 1);
}
