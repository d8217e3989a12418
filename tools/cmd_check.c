/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan check: judge the layout of --mesh, or the one --from keeps.
 */
#include "cli.h"

int cmd_check(const options_t *o)
{
    if (!o->mesh && !o->have_restart)
        return bad("check needs --mesh (the layout to judge; fields left out are planned), or "
                   "--from (the layout it keeps)");
    return cmd_plan(o);
}
