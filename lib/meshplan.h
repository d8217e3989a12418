/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libmeshplan: plan 3D-parallel (TP x CP x PP x DP + ZeRO) layouts for LLM
 * training and render the per-task environment.  Include this header, or
 * only the meshplan/ headers you need.
 */
#ifndef MESHPLAN_H
#define MESHPLAN_H

#include "meshplan/version.h"
#include "meshplan/error.h"
#include "meshplan/parse.h"
#include "meshplan/when.h"
#include "meshplan/spec.h"
#include "meshplan/params.h"
#include "meshplan/gpu.h"
#include "meshplan/layout.h"
#include "meshplan/calibrate.h"
#include "meshplan/policy.h"
#include "meshplan/shard.h"
#include "meshplan/accounting.h"
#include "meshplan/memory.h"
#include "meshplan/cost.h"
#include "meshplan/plan.h"
#include "meshplan/explain.h"
#include "meshplan/ranks.h"
#include "meshplan/env.h"
#include "meshplan/report.h"
#include "meshplan/topo.h"
#include "meshplan/request.h"
#include "meshplan/schedule.h"
#include "meshplan/picture.h"
#include "meshplan/step.h"
#include "meshplan/controller.h"
#include "meshplan/size.h"
#include "meshplan/restart.h"
#include "meshplan/listing.h"

#endif
