#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A real training client for meshplan's variables (PyTorch, CPU, gloo).

Started by srun (export mode torch: RANK, WORLD_SIZE, MASTER_* and the
MESH_*_GROUP lists) or by one torchrun per node (export mode torchrun: torchrun
sets RANK; the groups follow from MESH_ORDER and the sizes).  It uses nothing
else to find its place: no SLURM_* variable feeds the groups or the shards.

1. Groups: every rank checks its coordinates and groups against MESH_ORDER,
   then all ranks compare what they were told (all_gather) and build every
   group with new_group; a one-hot all_reduce inside each group proves that
   its members agree on who they are, and that the groups tile the world.
2. Training: a tiny residual MLP (float64) of sum(MESH_PP_LAYERS) layers runs
   exactly as the layout prescribes: column/row-parallel weights in the TP
   group (with sequence parallelism when MESH_SEQUENCE_PARALLEL=1), tokens
   split over the CP group, pipeline stages in Megatron's 1F1B order
   (interleaved when MESH_VPP_SIZE > 1) over MESH_NUM_MICRO_BATCHES
   micro-batches, gradients all-reduced in the DP group, or reduce-scattered
   with sharded optimizer state and parameters for ZeRO 1-3.  After a few SGD
   steps every rank compares the loss and its own parameter shard with a
   single-process reference of the same model and batch.
3. Experts (MoE plans only, when MESH_EP_SIZE is set): every stage's ranks
   are re-partitioned into etp x ep x edp as Megatron-Core's expert rank
   generator does (order tp-cp-ep-dp-pp, etp fastest); the client checks
   MESH_EP_*/MESH_ETP_*/MESH_EDP_GROUP against that, builds the groups, and
   runs one mixture-of-experts layer of --num-experts experts, top
   --moe-router-topk (both read from MESH_MEGATRON_ARGS): tokens dispatched
   to their experts' owners in the EP group (all_gather: gloo has no
   all_to_all), each expert's MLP split column/row-wise over the ETP group,
   outputs combined by all_reduce, expert gradients summed over the EDP group.
   Every rank's output and expert-gradient shard must equal a single-process
   reference that holds every expert.

Exit status 0 when every check on every rank passed; rank 0 prints one line
"meshplan-client: OK ...".  Any failure prints "meshplan-client: rank R: ..."
and every rank exits 1.
"""

import datetime
import json
import os
import sys

import torch
import torch.distributed as dist

AXES = ("tp", "cp", "dp", "pp")
HIDDEN, FFN = 16, 32  # the client's own tiny model, not the spec's
STEPS, LR, MOMENTUM = 3, 0.2, 0.9
TOL = 1e-9  # float64: only summation order differs from the reference


class Fail(Exception):
    pass


def env(name):
    v = os.environ.get(name)
    if v is None:
        raise Fail(f"{name} is not set")
    return v


def env_int(name):
    v = env(name)
    try:
        return int(v)
    except ValueError:
        raise Fail(f"{name}={v!r} is not an integer") from None


def parse_group(name, s):
    """'a,b,c' or, for very large groups, 'FIRST:STRIDE:COUNT'."""
    try:
        if ":" in s:
            first, stride, count = (int(x) for x in s.split(":"))
            return [first + i * stride for i in range(count)]
        return [int(x) for x in s.split(",")]
    except ValueError:
        raise Fail(f"{name}={s!r} is neither a comma list nor FIRST:STRIDE:COUNT") from None


# -- 1. the mesh ---------------------------------------------------------------


class Mesh:
    """This rank's coordinates and groups, as the variables describe them."""

    def __init__(self):
        self.rank, self.world = env_int("RANK"), env_int("WORLD_SIZE")
        self.size = {a: env_int(f"MESH_{a.upper()}_SIZE") for a in AXES}
        self.order = env("MESH_ORDER").split("-")
        if sorted(self.order) != sorted(AXES):
            raise Fail(f"MESH_ORDER={env('MESH_ORDER')} is not a permutation of tp-cp-dp-pp")
        prod = 1
        for a in AXES:
            prod *= self.size[a]
        if prod != self.world:
            raise Fail(f"tp*cp*dp*pp = {prod} but WORLD_SIZE = {self.world}")
        self.coord = self.coords_of(self.rank)
        # torchrun assigns the ranks, so meshplan leaves the per-rank lists out
        self.explicit = os.environ.get("MESH_TP_GROUP") is not None
        self.groups = {a: self.expected_group(self.rank, a) for a in AXES}
        if self.explicit:
            for a in AXES:
                got = env_int(f"MESH_{a.upper()}_RANK")
                if got != self.coord[a]:
                    raise Fail(
                        f"MESH_{a.upper()}_RANK={got}, but rank {self.rank} in order "
                        f"{'-'.join(self.order)} has {a} coordinate {self.coord[a]}"
                    )
                told = parse_group(f"MESH_{a.upper()}_GROUP", env(f"MESH_{a.upper()}_GROUP"))
                if told != self.groups[a]:
                    raise Fail(
                        f"MESH_{a.upper()}_GROUP={env(f'MESH_{a.upper()}_GROUP')}, but "
                        f"MESH_ORDER gives {','.join(map(str, self.groups[a]))}"
                    )

    def coords_of(self, r):
        c = {}
        for a in self.order:  # the first axis varies fastest
            c[a] = r % self.size[a]
            r //= self.size[a]
        return c

    def rank_of(self, c):
        r = 0
        for a in reversed(self.order):
            r = r * self.size[a] + c[a]
        return r

    def expected_group(self, r, axis):
        c = self.coords_of(r)
        return [self.rank_of({**c, axis: i}) for i in range(self.size[axis])]


def build_groups(mesh):
    """Create every group of every axis on every rank (new_group is collective)."""
    told = {a: mesh.groups[a] for a in AXES}
    node = os.environ.get("SLURMD_NODENAME", "?")  # for the TP-inside-a-node check only
    everyone = [None] * mesh.world
    dist.all_gather_object(everyone, (mesh.rank, told, env("MESH_PLAN"), env("MESH_PLAN_DIGEST"), node))
    problems = []
    for r, (rr, _, plan, digest, _) in enumerate(everyone):
        if rr != r:
            problems.append(f"slot {r} holds rank {rr}")
        if (plan, digest) != (env("MESH_PLAN"), env("MESH_PLAN_DIGEST")):
            problems.append(f"rank {r} was given plan {plan} ({digest}), this rank {env('MESH_PLAN')}")
    handles = {}
    for a in AXES:
        distinct = sorted({tuple(t[1][a]) for t in everyone})
        cover = sorted(r for g in distinct for r in g)
        if cover != list(range(mesh.world)):
            problems.append(f"{a} groups {distinct} do not tile ranks 0..{mesh.world - 1}")
        for r, t in enumerate(everyone):
            if r not in t[1][a]:
                problems.append(f"rank {r} is not in its own {a} group {t[1][a]}")
        if a == "tp":
            for g in distinct:
                nodes = {everyone[r][4] for r in g}
                if len(nodes) > 1:
                    problems.append(f"TP group {list(g)} spans nodes {sorted(nodes)}")
        for g in distinct:  # same order on every rank, as new_group requires
            h = dist.new_group(list(g))
            if list(g) == mesh.groups[a]:
                handles[a] = h
    if problems:
        raise Fail("; ".join(problems[:4]))
    # Membership by collective: the one-hot sum over a group is its member set.
    for a in AXES:
        onehot = torch.zeros(mesh.world, dtype=torch.float64)
        onehot[mesh.rank] = 1
        dist.all_reduce(onehot, group=handles[a])
        members = [r for r in range(mesh.world) if onehot[r] == 1]
        if members != mesh.groups[a] or onehot.sum() != len(members):
            raise Fail(f"{a} group all_reduce reached {members}, expected {mesh.groups[a]}")
    return handles


def check_batch_and_adapters(mesh):
    """The batch identity, and that the adapters say the same as MESH_*."""
    mb, m = env_int("MESH_MICRO_BATCH_SIZE"), env_int("MESH_NUM_MICRO_BATCHES")
    gb, dp = env_int("MESH_GLOBAL_BATCH_SIZE"), mesh.size["dp"]
    if mb * m * dp != gb:
        raise Fail(f"micro batch {mb} x {m} micro-batches x dp {dp} != global batch {gb}")
    ds = json.loads(env("MESH_DEEPSPEED_CONFIG"))
    want = {
        "train_batch_size": gb,
        "train_micro_batch_size_per_gpu": mb,
        "gradient_accumulation_steps": m,
    }
    for k, v in want.items():
        if ds.get(k) != v:
            raise Fail(f"MESH_DEEPSPEED_CONFIG {k}={ds.get(k)}, expected {v}")
    if ds["zero_optimization"]["stage"] != env_int("MESH_ZERO_STAGE"):
        raise Fail("MESH_DEEPSPEED_CONFIG zero_optimization.stage differs from MESH_ZERO_STAGE")
    args = env("MESH_MEGATRON_ARGS").split()
    flags = {
        "--tensor-model-parallel-size": mesh.size["tp"],
        "--pipeline-model-parallel-size": mesh.size["pp"],
        "--context-parallel-size": mesh.size["cp"],
        "--micro-batch-size": mb,
        "--global-batch-size": gb,
    }
    for f, v in flags.items():
        i = args.index(f) + 1 if f in args else len(args)
        if i >= len(args) or args[i] != str(v):
            raise Fail(f"MESH_MEGATRON_ARGS lacks '{f} {v}'")
    if ("--sequence-parallel" in args) != (env_int("MESH_SEQUENCE_PARALLEL") == 1):
        raise Fail("MESH_MEGATRON_ARGS and MESH_SEQUENCE_PARALLEL disagree on sequence parallelism")
    return mb, m, gb


# -- 2. the model --------------------------------------------------------------


def full_weights():
    """Every layer's (W1 [FFN x HIDDEN], W2 [HIDDEN x FFN]); the same on every rank."""
    g = torch.Generator().manual_seed(20261129)
    layers = sum(parse_group("MESH_PP_LAYERS", env("MESH_PP_LAYERS")))
    return [
        (
            torch.randn(FFN, HIDDEN, generator=g, dtype=torch.float64) / HIDDEN**0.5,
            torch.randn(HIDDEN, FFN, generator=g, dtype=torch.float64) / FFN**0.5,
        )
        for _ in range(layers)
    ]


def batch(step, gb, tokens):
    g = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(gb, tokens, HIDDEN, generator=g, dtype=torch.float64)
    y = torch.randn(gb, tokens, HIDDEN, generator=g, dtype=torch.float64) * 0.5
    return x, y


def reference(gb, tokens):
    """Single-process training of the same model on the same batches."""
    ws = [(a.clone().requires_grad_(), b.clone().requires_grad_()) for a, b in full_weights()]
    bufs = [(torch.zeros_like(a), torch.zeros_like(b)) for a, b in ws]
    losses = []
    for step in range(STEPS):
        x, y = batch(step, gb, tokens)
        for w1, w2 in ws:
            x = x + torch.tanh(x @ w1.T) @ w2.T
        loss = ((x - y) ** 2).sum() / y.numel()
        loss.backward()
        losses.append(loss.item())
        with torch.no_grad():
            for (w1, w2), (b1, b2) in zip(ws, bufs):
                for w, b in ((w1, b1), (w2, b2)):
                    b.mul_(MOMENTUM).add_(w.grad)
                    w.sub_(LR * b)
                    w.grad = None
    return losses, [(a.detach(), b.detach()) for a, b in ws]


class Copy(torch.autograd.Function):
    """Megatron's f: identity forward, all-reduce of the gradient backward."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x

    @staticmethod
    def backward(ctx, g):
        g = g.clone()
        dist.all_reduce(g, group=ctx.group)
        return g, None


class Reduce(torch.autograd.Function):
    """Megatron's g: all-reduce forward, identity backward."""

    @staticmethod
    def forward(ctx, x, group):
        x = x.clone()
        dist.all_reduce(x, group=group)
        return x

    @staticmethod
    def backward(ctx, g):
        return g, None


def gather_tokens(x, group, n):
    parts = [torch.empty_like(x) for _ in range(n)]
    dist.all_gather(parts, x.contiguous(), group=group)
    return torch.cat(parts, dim=1)


def scatter_tokens(x, group, n, i):
    """Sum over the group, keep token slice i (gloo has no reduce_scatter)."""
    x = x.clone()
    dist.all_reduce(x, group=group)
    return x.chunk(n, dim=1)[i].contiguous()


class Gather(torch.autograd.Function):
    """Sequence parallel: all-gather tokens forward, reduce-scatter backward."""

    @staticmethod
    def forward(ctx, x, group, n, i):
        ctx.group, ctx.n, ctx.i = group, n, i
        return gather_tokens(x, group, n)

    @staticmethod
    def backward(ctx, g):
        return scatter_tokens(g, ctx.group, ctx.n, ctx.i), None, None, None


class Scatter(torch.autograd.Function):
    """Sequence parallel: reduce-scatter tokens forward, all-gather backward."""

    @staticmethod
    def forward(ctx, x, group, n, i):
        ctx.group, ctx.n = group, n
        return scatter_tokens(x, group, n, i)

    @staticmethod
    def backward(ctx, g):
        return gather_tokens(g, ctx.group, ctx.n), None, None, None


def chunk_layers(pp_layers, pp, vpp):
    """Layer ranges of the pp*vpp virtual stages, in model order.

    Virtual stage g = c*pp + s is chunk c of stage s (Megatron's interleaving).
    With vpp > 1 every chunk has q/vpp layers, q the fullest stage, except that
    the first chunk and the last give up the slots the embedding and the loss
    take (--account-for-embedding/loss-in-pipeline-split)."""
    if len(pp_layers) != pp:
        raise Fail(f"MESH_PP_LAYERS has {len(pp_layers)} entries for MESH_PP_SIZE={pp}")
    size = {}
    q = max(pp_layers)
    if vpp > 1 and q % vpp:
        raise Fail(f"MESH_PP_LAYERS={pp_layers}: {q} layers do not split into {vpp} chunks")
    for s in range(pp):
        for c in range(vpp):
            n = pp_layers[s] if vpp == 1 else q // vpp
            if vpp > 1 and (s, c) in ((0, 0), (pp - 1, vpp - 1)):
                n -= q - pp_layers[s]
            if n < 0 or (vpp > 1 and 0 < s < pp - 1 and pp_layers[s] != q):
                raise Fail(f"MESH_PP_LAYERS={pp_layers} cannot be interleaved {vpp} ways")
            size[c * pp + s] = n
    ranges, start = {}, 0
    for g in range(pp * vpp):
        ranges[g] = range(start, start + size[g])
        start += size[g]
    return ranges


class Worker:
    def __init__(self, mesh, handles, mb, m, gb):
        self.mesh, self.h = mesh, handles
        self.mb, self.m, self.gb = mb, m, gb
        c, sz = mesh.coord, mesh.size
        self.tp, self.tpr = sz["tp"], c["tp"]
        self.cp, self.cpr = sz["cp"], c["cp"]
        self.dp, self.dpr = sz["dp"], c["dp"]
        self.pp, self.ppr = sz["pp"], c["pp"]
        self.vpp = env_int("MESH_VPP_SIZE")
        self.zero = env_int("MESH_ZERO_STAGE")
        self.sp = env_int("MESH_SEQUENCE_PARALLEL") == 1 and self.tp > 1
        self.tokens = 4 * self.tp * self.cp
        if self.vpp > 1 and m % self.pp:
            raise Fail(f"interleaving needs MESH_NUM_MICRO_BATCHES={m} to be a multiple of pp {self.pp}")
        pp_layers = parse_group("MESH_PP_LAYERS", env("MESH_PP_LAYERS"))
        self.ranges = chunk_layers(pp_layers, self.pp, self.vpp)
        self.pp_group = mesh.groups["pp"]  # ascending = stage order
        # this rank's layers (all its chunks), TP shard of each: W1 rows, W2 columns
        f = FFN // self.tp
        self.mine = [l for c in range(self.vpp) for l in self.ranges[c * self.pp + self.ppr]]
        full = full_weights()
        self.params = []
        cols = slice(self.tpr * f, (self.tpr + 1) * f)
        for l in self.mine:
            w1, w2 = full[l]
            self.params += [w1[cols].clone(), w2[:, cols].clone()]
        self.numel = sum(p.numel() for p in self.params)
        self.shard_len = -(-self.numel // self.dp)
        flat = self.flatten(self.params)
        if self.zero >= 1:
            self.buf = torch.zeros(self.shard_len, dtype=torch.float64)
        else:
            self.buf = torch.zeros(self.numel, dtype=torch.float64)
        if self.zero == 3:  # only this rank's shard persists between steps
            self.shard = self.my_shard(flat).clone()
            self.params = None

    # -- flat buffers and ZeRO shards
    def flatten(self, ts):
        flat = torch.cat([t.reshape(-1) for t in ts])
        return torch.cat([flat, flat.new_zeros(self.shard_len * self.dp - self.numel)])

    def unflatten(self, flat):
        out, i = [], 0
        for l in self.mine:
            for shape in ((FFN // self.tp, HIDDEN), (HIDDEN, FFN // self.tp)):
                n = shape[0] * shape[1]
                out.append(flat[i : i + n].reshape(shape).clone())
                i += n
        return out

    def my_shard(self, flat):
        return flat[self.dpr * self.shard_len : (self.dpr + 1) * self.shard_len]

    def all_gather_flat(self, shard):
        parts = [torch.empty_like(shard) for _ in range(self.dp)]
        dist.all_gather(parts, shard.contiguous(), group=self.h["dp"])
        return torch.cat(parts)

    def reduce_scatter_flat(self, flat):
        """Each DP rank ends with the sum of its own shard only."""
        out = None
        for i, dst in enumerate(self.mesh.groups["dp"]):
            piece = flat[i * self.shard_len : (i + 1) * self.shard_len].clone()
            dist.reduce(piece, dst=dst, group=self.h["dp"])
            if i == self.dpr:
                out = piece
        return out

    # -- the layers
    def layer(self, x, w1, w2):
        g = self.h["tp"]
        if self.tp == 1:
            return x + torch.tanh(x @ w1.T) @ w2.T
        if self.sp:
            full = Gather.apply(x, g, self.tp, self.tpr)
            return x + Scatter.apply(torch.tanh(full @ w1.T) @ w2.T, g, self.tp, self.tpr)
        return x + Reduce.apply(torch.tanh(Copy.apply(x, g) @ w1.T) @ w2.T, g)

    def run_chunk(self, c, x, weights):
        g = c * self.pp + self.ppr
        for l in self.ranges[g]:
            i = self.mine.index(l)
            x = self.layer(x, weights[2 * i], weights[2 * i + 1])
        return x

    def local_tokens(self, t):
        """This rank's tokens of [batch, tokens, hidden]: CP slice, then SP slice."""
        t = t.chunk(self.cp, dim=1)[self.cpr]
        return t.chunk(self.tp, dim=1)[self.tpr] if self.sp else t

    def micro_batch(self, data, k):
        lo = self.dpr * (self.gb // self.dp) + k * self.mb
        return self.local_tokens(data[lo : lo + self.mb])

    # -- the pipeline schedule (Megatron's 1F1B, interleaved when vpp > 1)
    def unit(self, k, forward):
        if self.vpp == 1:
            return 0, k
        group, r = divmod(k, self.pp * self.vpp)
        c = r // self.pp
        return (c if forward else self.vpp - 1 - c), group * self.pp + r % self.pp

    def schedule(self):
        total = self.m * self.vpp
        if self.vpp == 1:
            warm = min(self.pp - self.ppr - 1, total)
        elif self.m == self.pp:
            warm = total
        else:
            warm = min((self.pp - self.ppr - 1) * 2 + (self.vpp - 1) * self.pp, total)
        ops = [("F", k) for k in range(warm)]
        for i in range(total - warm):
            ops += [("F", warm + i), ("B", i)]
        ops += [("B", k) for k in range(total - warm, total)]
        return ops

    def shape(self):
        t = self.tokens // self.cp // (self.tp if self.sp else 1)
        return (self.mb, t, HIDDEN)

    def tag(self, g, k, backward):
        return (k * self.pp * self.vpp + g) * 2 + backward

    def step(self, step):
        if self.zero == 3:
            weights = self.unflatten(self.all_gather_flat(self.shard))
        else:
            weights = [p.clone() for p in self.params]
        for w in weights:
            w.requires_grad_()
        x_all, y_all = batch(step, self.gb, self.tokens)
        last_g = self.pp * self.vpp - 1
        prev, nxt = self.pp_group[self.ppr - 1], self.pp_group[(self.ppr + 1) % self.pp]
        saved, pending, loss_sum = {}, [], 0.0
        for op, k in self.schedule():
            c, mbi = self.unit(k, op == "F")
            g = c * self.pp + self.ppr
            if op == "F":
                if g == 0:
                    x = self.micro_batch(x_all, mbi)
                else:
                    x = torch.empty(self.shape(), dtype=torch.float64)
                    dist.recv(x, src=prev, tag=self.tag(g, mbi, 0))
                    x.requires_grad_()
                out = self.run_chunk(c, x, weights)
                if g == last_g:
                    out = ((out - self.micro_batch(y_all, mbi)) ** 2).sum() / (self.gb * self.tokens * HIDDEN)
                    if self.sp or self.tpr == 0:  # without SP every TP rank holds the same loss
                        loss_sum += out.item()
                else:
                    send = out.detach().clone()
                    pending.append((dist.isend(send, dst=nxt, tag=self.tag(g + 1, mbi, 0)), send))
                saved[(g, mbi)] = (x, out)
            else:
                x, out = saved.pop((g, mbi))
                if g == last_g:
                    out.backward()
                else:
                    grad = torch.empty(self.shape(), dtype=torch.float64)
                    dist.recv(grad, src=nxt, tag=self.tag(g, mbi, 1))
                    out.backward(grad)
                if g > 0:
                    send = x.grad.detach().clone()
                    pending.append((dist.isend(send, dst=prev, tag=self.tag(g - 1, mbi, 1)), send))
        for work, _ in pending:
            work.wait()
        if saved:
            raise Fail(f"schedule left {len(saved)} micro-batches without a backward pass")
        self.update([w.grad for w in weights])
        return loss_sum

    def update(self, grads):
        flat = self.flatten(grads)
        if self.cp > 1:  # CP ranks saw different tokens of the same samples
            dist.all_reduce(flat, group=self.h["cp"])
        if self.zero <= 1:
            dist.all_reduce(flat, group=self.h["dp"])
        if self.zero == 0:
            self.buf.mul_(MOMENTUM).add_(flat[: self.numel])
            self.params = [p - LR * b for p, b in zip(self.params, self.unflatten(self.buf))]
            return
        grad = self.my_shard(flat) if self.zero == 1 else self.reduce_scatter_flat(flat)
        self.buf.mul_(MOMENTUM).add_(grad)
        shard = (self.shard if self.zero == 3 else self.my_shard(self.flatten(self.params))) - LR * self.buf
        if self.zero == 3:
            self.shard = shard
        else:
            self.params = self.unflatten(self.all_gather_flat(shard))

    def compare(self, ref_weights):
        """Largest difference between this rank's parameters and the reference's."""
        f = FFN // self.tp
        cols = slice(self.tpr * f, (self.tpr + 1) * f)
        want = []
        for l in self.mine:
            w1, w2 = ref_weights[l]
            want += [w1[cols], w2[:, cols]]
        if self.zero == 3:
            return (self.shard - self.my_shard(self.flatten(want))).abs().max().item()
        return max((p - w).abs().max().item() for p, w in zip(self.params, want))


def train(mesh, handles):
    mb, m, gb = check_batch_and_adapters(mesh)
    w = Worker(mesh, handles, mb, m, gb)
    losses = []
    for step in range(STEPS):
        loss = torch.tensor([w.step(step)], dtype=torch.float64)
        dist.all_reduce(loss)
        losses.append(loss.item())
    ref_losses, ref_weights = reference(gb, w.tokens)
    dloss = max(abs(a - b) / abs(b) for a, b in zip(losses, ref_losses))
    dw = w.compare(ref_weights)
    if dloss > TOL or dw > TOL:
        raise Fail(
            f"diverged from the single-process reference: losses {losses} vs {ref_losses} "
            f"(rel {dloss:.2e}), parameters differ by {dw:.2e}"
        )
    if not losses[-1] < losses[0]:
        raise Fail(f"loss did not decrease: {losses}")
    return losses, dloss, dw


# -- 3. the experts -------------------------------------------------------------

E_HIDDEN, E_FFN, E_TOKENS = 8, 12, 6  # the client's own tiny MoE layer


def megatron_flag(args, flag):
    if flag not in args or args.index(flag) + 1 >= len(args):
        raise Fail(f"MESH_MEGATRON_ARGS lacks {flag}")
    try:
        return int(args[args.index(flag) + 1])
    except ValueError:
        raise Fail(f"MESH_MEGATRON_ARGS: {flag} {args[args.index(flag) + 1]!r} is not an integer") from None


class ExpertMesh:
    """This rank's expert coordinates: Megatron-Core's expert RankGenerator
    (megatron/core/parallel_state.py) re-partitions each stage's tp*cp*dp
    ranks as rank = etp_r + etp*(ep_r + ep*(edp_r + edp*pp_r))."""

    AXES = ("etp", "ep", "edp")

    def __init__(self, mesh):
        if mesh.order[-1] != "pp":
            raise Fail(f"MESH_ORDER={'-'.join(mesh.order)}: expert groups need pp slowest")
        self.rank, self.world = mesh.rank, mesh.world
        stage = mesh.size["tp"] * mesh.size["cp"] * mesh.size["dp"]
        self.size = {"etp": env_int("MESH_ETP_SIZE"), "ep": env_int("MESH_EP_SIZE")}
        if stage % (self.size["etp"] * self.size["ep"]):
            raise Fail(f"etp {self.size['etp']} x ep {self.size['ep']} does not divide tp*cp*dp = {stage}")
        self.size["edp"] = stage // (self.size["etp"] * self.size["ep"])
        self.stage = stage
        args = env("MESH_MEGATRON_ARGS").split()
        self.experts = megatron_flag(args, "--num-experts")
        self.top_k = megatron_flag(args, "--moe-router-topk")
        for flag, want in (("--expert-model-parallel-size", self.size["ep"]),
                           ("--expert-tensor-parallel-size", self.size["etp"])):
            if megatron_flag(args, flag) != want:
                raise Fail(f"MESH_MEGATRON_ARGS {flag} {megatron_flag(args, flag)}, MESH_* say {want}")
        if self.experts % self.size["ep"] or E_FFN % self.size["etp"] or not 0 < self.top_k <= self.experts:
            raise Fail(f"{self.experts} experts, top {self.top_k}, ep {self.size['ep']}, etp {self.size['etp']}")
        self.coord = self.coords_of(self.rank)
        self.groups = {a: self.expected_group(self.rank, a) for a in self.AXES}
        for a in ("ep", "etp"):
            got = env_int(f"MESH_{a.upper()}_RANK")
            if got != self.coord[a]:
                raise Fail(f"MESH_{a.upper()}_RANK={got}, Megatron's expert order gives {self.coord[a]}")
        for a in self.AXES:
            name = f"MESH_{a.upper()}_GROUP"
            if parse_group(name, env(name)) != self.groups[a]:
                raise Fail(f"{name}={env(name)}, Megatron's expert order gives "
                           f"{','.join(map(str, self.groups[a]))}")

    def coords_of(self, r):
        c = {"pp": r // self.stage}
        r %= self.stage
        for a in self.AXES:
            c[a] = r % self.size[a]
            r //= self.size[a]
        return c

    def rank_of(self, c):
        r = c["pp"]
        for a in reversed(self.AXES):
            r = r * self.size[a] + c[a]
        return r

    def expected_group(self, r, axis):
        c = self.coords_of(r)
        return [self.rank_of({**c, axis: i}) for i in range(self.size[axis])]


def expert_weights(experts):
    """Router [E x H] and each expert's (W1 [F x H], W2 [H x F]); the same on every rank."""
    g = torch.Generator().manual_seed(20261201)
    router = torch.randn(experts, E_HIDDEN, generator=g, dtype=torch.float64)
    w1 = torch.randn(experts, E_FFN, E_HIDDEN, generator=g, dtype=torch.float64) / E_HIDDEN**0.5
    w2 = torch.randn(experts, E_HIDDEN, E_FFN, generator=g, dtype=torch.float64) / E_FFN**0.5
    return router, w1, w2


def expert_tokens(em, c):
    """The tokens of expert coordinates c (shared by its ETP group) and the
    loss weights that make the gradient check sensitive to every output."""
    g = torch.Generator().manual_seed(7000 + c["pp"] * 1000 + c["edp"] * 100 + c["ep"])
    x = torch.randn(E_TOKENS, E_HIDDEN, generator=g, dtype=torch.float64)
    v = torch.randn(E_TOKENS, E_HIDDEN, generator=g, dtype=torch.float64)
    return x, v


def route(x, router, top_k):
    """Top-k experts of each token and their renormalised softmax gates."""
    probs = torch.softmax(x @ router.T, dim=-1)
    gates, idx = probs.topk(top_k, dim=-1)
    return idx, gates / gates.sum(dim=-1, keepdim=True)


def moe_forward(x, router, top_k, experts, w1, w2, cols):
    """The sum over each token's top-k experts e among `experts` of
    gate * tanh(x W1[e][cols]^T) W2[e][:, cols]^T, w1/w2 indexed by position
    in `experts`.  With a slice of the experts' FFN columns (or weights that
    hold only those) this is one ETP rank's partial sum."""
    idx, gates = route(x, router, top_k)
    y = torch.zeros_like(x)
    for j, e in enumerate(experts):
        hit = (idx == e)
        tok = hit.any(dim=-1).nonzero().flatten()
        if len(tok) == 0:
            continue
        gate = (gates * hit).sum(dim=-1)[tok].unsqueeze(-1)
        h = torch.tanh(x[tok] @ w1[j][cols].T) @ w2[j][:, cols].T
        y = y.index_add(0, tok, gate * h)
    return y


def build_expert_groups(em):
    told = dict(em.groups)
    node = os.environ.get("SLURMD_NODENAME", "?")
    everyone = [None] * em.world
    dist.all_gather_object(everyone, (told, node))
    handles, nodes_per_ep = {}, 1
    for a in ExpertMesh.AXES:
        distinct = sorted({tuple(t[0][a]) for t in everyone})
        if sorted(r for g in distinct for r in g) != list(range(em.world)):
            raise Fail(f"{a} groups {distinct} do not tile ranks 0..{em.world - 1}")
        for g in distinct:
            h = dist.new_group(list(g))
            if list(g) == em.groups[a]:
                handles[a] = h
            if a == "ep":
                nodes_per_ep = max(nodes_per_ep, len({everyone[r][1] for r in g}))
    return handles, nodes_per_ep


def experts(em):
    handles, nodes_per_ep = build_expert_groups(em)
    ep, etp, per = em.size["ep"], em.size["etp"], em.experts // em.size["ep"]
    router, w1, w2 = expert_weights(em.experts)
    mine = list(range(em.coord["ep"] * per, (em.coord["ep"] + 1) * per))
    f = E_FFN // etp
    cols = slice(em.coord["etp"] * f, (em.coord["etp"] + 1) * f)
    x, v = expert_tokens(em, em.coord)
    # dispatch: every EP peer's tokens (they share this rank's etp and edp)
    xs = [torch.empty_like(x) for _ in range(ep)]
    dist.all_gather(xs, x, group=handles["ep"])
    vs = [torch.empty_like(v) for _ in range(ep)]
    dist.all_gather(vs, v, group=handles["ep"])
    X, V = torch.cat(xs), torch.cat(vs)
    # this rank holds only its columns of its experts' MLPs
    w1s = w1[mine][:, cols].clone().requires_grad_()
    w2s = w2[mine][:, :, cols].clone().requires_grad_()
    y_part = moe_forward(X, router, em.top_k, mine, w1s, w2s, slice(None))
    (y_part * V).sum().backward()
    # combine: the ETP partial sums, then the EP group's experts
    y = y_part.detach().clone()
    dist.all_reduce(y, group=handles["etp"])
    dist.all_reduce(y, group=handles["ep"])
    mine_y = y[em.coord["ep"] * E_TOKENS:(em.coord["ep"] + 1) * E_TOKENS]
    g1, g2 = w1s.grad.clone(), w2s.grad.clone()
    dist.all_reduce(g1, group=handles["edp"])
    dist.all_reduce(g2, group=handles["edp"])
    # reference: one process, every expert, every token set of this stage
    want_y = moe_forward(x, router, em.top_k, range(em.experts), w1, w2, slice(None))
    r1, r2 = w1.clone().requires_grad_(), w2.clone().requires_grad_()
    for edp_r in range(em.size["edp"]):
        for ep_r in range(ep):
            xr, vr = expert_tokens(em, {"pp": em.coord["pp"], "edp": edp_r, "ep": ep_r})
            (moe_forward(xr, router, em.top_k, range(em.experts), r1, r2, slice(None)) * vr).sum().backward()
    dy = (mine_y - want_y).abs().max().item()
    dg = max((g1 - r1.grad[mine][:, cols]).abs().max().item(),
             (g2 - r2.grad[mine][:, :, cols]).abs().max().item())
    if dy > TOL or dg > TOL:
        raise Fail(f"expert layer differs from the single-process reference: output by {dy:.2e}, "
                   f"expert gradients by {dg:.2e}")
    if r1.grad[mine][:, cols].abs().max().item() == 0:
        raise Fail("no token reached this rank's experts: the check proves nothing")
    return em, nodes_per_ep, max(dy, dg)


def agree(ok):
    """All ranks learn whether any rank failed, so that none waits forever."""
    flag = torch.tensor([0.0 if ok else 1.0])
    try:
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    except RuntimeError:  # a peer is gone or wedged: that is a failure too
        return False
    return flag.item() == 0.0


def phase(name, fn, *args):
    """Run fn on every rank; (True, result) only if it passed everywhere."""
    result, why = None, None
    try:
        result = fn(*args)
    except Fail as e:
        why = str(e)
    except Exception as e:  # a bug or a broken peer: still tell the others
        why = f"{type(e).__name__}: {e}"
    if agree(why is None):
        return True, result
    rank = os.environ.get("RANK", "?")
    print(f"meshplan-client: rank {rank}: {name}: {why or 'another rank failed'}", file=sys.stderr, flush=True)
    return False, None


def main():
    torch.set_num_threads(1)
    # env:// reads RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT itself
    dist.init_process_group("gloo", init_method="env://", timeout=datetime.timedelta(seconds=60))
    ok, mesh = phase("variables", Mesh)
    if not ok:
        return 1
    ok, handles = phase("groups", build_groups, mesh)
    if not ok:
        return 1
    ok, result = phase("training", train, mesh, handles)
    if not ok:
        return 1
    moe = ""
    if os.environ.get("MESH_EP_SIZE") is not None:
        # no collective before every rank has checked its variables
        ok, em = phase("expert variables", ExpertMesh, mesh)
        if not ok:
            return 1
        ok, res = phase("experts", experts, em)
        if not ok:
            return 1
        em, ep_nodes, diff = res
        moe = (f" experts={em.experts} top_k={em.top_k} etp={em.size['etp']} ep={em.size['ep']} "
               f"edp={em.size['edp']} ep_nodes={ep_nodes} max expert diff {diff:.1e}")
    if mesh.rank == 0:
        losses, dloss, dw = result
        print(
            f"meshplan-client: OK plan={env('MESH_PLAN')} world={mesh.world} "
            f"mode={'torch' if mesh.explicit else 'torchrun'} stages={env('MESH_PP_LAYERS')} steps={STEPS} "
            f"loss {losses[0]:.6f} -> {losses[-1]:.6f}, max rel loss diff {dloss:.1e}, "
            f"max param diff {dw:.1e}{moe}",
            flush=True,
        )
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
