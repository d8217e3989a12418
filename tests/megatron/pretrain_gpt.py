#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A stand-in for Megatron-LM's pretrain_gpt.py, for the job-script test.

examples/megatron-lm.sbatch starts "$MEGATRON_LM/pretrain_gpt.py" on every
task; the test (tests/client/test-client) points MEGATRON_LM at a folder
holding this file as pretrain_gpt.py, validate.py beside it and Megatron-LM's
own megatron/ package (../shared/megatron, the cited commit).  On each task it
runs what the real script runs first, Megatron-LM's parse_args() and
validate_args(), on the task's command line and environment, with the stand-ins
validate.py describes (the GPU's compute capability from
MEGATRON_STANDIN_ARCH, default 9.0: the testbed's H100s).  Then, instead of
training, it checks that the task's groups (MESH_TP_GROUP, MESH_PP_GROUP,
MESH_DP_GROUP, MESH_CP_GROUP) are those Megatron-Core's own RankGenerator
(megatron/core/parallel_state.py) builds for the same sizes in its default
order, and prints one line: "pretrain_gpt-standin: OK rank R of W plan P", or
"pretrain_gpt-standin: rank R: WHAT" and exits 1.
"""
import contextlib
import io
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import validate  # noqa: E402  (beside this file)


def group_list(text):
    if text.count(":") == 2:  # FIRST:STRIDE:COUNT
        first, stride, count = (int(x) for x in text.split(":"))
        return [first + i * stride for i in range(count)]
    return [int(x) for x in text.split(",")]


def main():
    rank = os.environ.get("RANK", "?")
    major, minor = (int(x) for x in os.environ.get("MEGATRON_STANDIN_ARCH", "9.0").split("."))
    validate.install_stubs({"cc": (major, minor), "gpu": "standin"})
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            import megatron.training.arguments as arguments
            from megatron.core.parallel_state import RankGenerator
            args = arguments.parse_args()
            arguments.validate_args(args)
    except (AssertionError, ValueError, SystemExit) as e:
        why = str(e).strip().splitlines()[0] if str(e).strip() else out.getvalue()[-300:]
        print(f"pretrain_gpt-standin: rank {rank}: Megatron-LM refused the task: {why}")
        return 1
    gen = RankGenerator(tp=args.tensor_model_parallel_size, ep=1, dp=args.data_parallel_size,
                        pp=args.pipeline_model_parallel_size, cp=args.context_parallel_size,
                        order="tp-cp-ep-dp-pp")
    r = args.rank
    for token, var in (("tp", "MESH_TP_GROUP"), ("pp", "MESH_PP_GROUP"),
                       ("dp", "MESH_DP_GROUP"), ("cp", "MESH_CP_GROUP")):
        mine = [g for g in gen.get_ranks(token) if r in g]
        got = group_list(os.environ[var])
        if mine != [got]:
            print(f"pretrain_gpt-standin: rank {r}: {var}={os.environ[var]}, "
                  f"Megatron-Core's {token} group is {mine}")
            return 1
    print(f"pretrain_gpt-standin: OK rank {r} of {args.world_size} "
          f"plan {os.environ.get('MESH_PLAN')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
