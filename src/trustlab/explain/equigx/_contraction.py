"""An e3nn tensor product with per-edge weights, evaluated as dense batched matrix products.

e3nn evaluates each path of ``TP(x1, x2; w)`` as an einsum over the outer product of its two
inputs; autograd's backward through those broadcast products (and through e3nn's slice of the
weights per path) is most of the fast EquiGX pass. Here the same map is computed per input
irrep block ``b`` of ``x1`` (multiplicity ``m``, dimension ``d``) as

    M_b = x2 @ C_b            (E, d, K_b): the coupling of x2 with every path fed by block b
    t_b = x1_b @ M_b          (E, m, K_b): batched over edges
    out_p = w_p * t_p         ("uvu": one weight per channel)
    out_p = w_p^T @ t_p       ("uvw": a weight matrix per edge)

A fully connected ("uvw") product sums every path into an output block in one batched product
over the stacked channels of those paths (rows (p, u)): a batch of tiny 8 x 8 products per edge
and path ran at well under a GFLOP/s.

with ``C_b`` read off the tensor product itself (its output on unit inputs with unit weights),
so e3nn's Clebsch-Gordan coefficients, path weights and normalisation are used as they are,
not re-derived. Pieces are cut with ``torch.split`` (whose backward is one concatenation, not a
zero-filled tensor per path). Values equal ``tp(x1, x2, w)`` up to rounding (tested in float64).
Supported: external per-edge weights (``shared_weights=False``), instructions "uvu" and "uvw"
with weights, and a second input of multiplicity one per irrep (spherical harmonics); anything
else is reported by :func:`supports` and the caller uses e3nn's own forward.
"""

from __future__ import annotations

from typing import Any

from trustlab._lazy import require

torch = require("torch", "graph")


def supports(tp: Any) -> bool:
    """Whether :class:`DenseTensorProduct` can stand in for ``tp``."""
    try:
        if getattr(tp, "shared_weights", True) or getattr(tp, "internal_weights", True):
            return False
        if any(mul != 1 for mul, _ in tp.irreps_in2):
            return False
        seen = set()
        for ins in tp.instructions:
            if ins.connection_mode not in ("uvu", "uvw") or not ins.has_weight:
                return False
            key = (ins.i_in1, ins.i_in2, ins.i_out)
            if key in seen:
                return False
            seen.add(key)
        return True
    except (AttributeError, TypeError):
        return False


class DenseTensorProduct:
    """``tp(x1, x2, w)`` for an e3nn ``TensorProduct`` accepted by :func:`supports`.

    The coupling tensors are read off ``tp`` itself, in the dtype of the inputs at the first call
    with that dtype (so a float64 copy of a network built in float32 keeps that copy's rounded
    coefficients, as its own forward does)."""

    def __init__(self, tp: Any) -> None:
        self.tp = tp
        in1, in2, out = tp.irreps_in1, tp.irreps_in2, tp.irreps_out
        self.d2 = in2.dim
        self.in1_sizes = [mul * ir.dim for mul, ir in in1]
        self.in1_shapes = [(mul, ir.dim) for mul, ir in in1]
        self.out_shapes = [(mul, ir.dim) for mul, ir in out]
        weight_sizes, offset = [], 0
        self.paths: list[list[tuple[int, int, str, int]]] = [[] for _ in in1]
        for index, ins in enumerate(tp.instructions):
            n = 1
            for s in ins.path_shape:
                n *= s
            weight_sizes.append(n)
            self.paths[ins.i_in1].append((index, ins.i_out, ins.connection_mode, offset))
            offset += n
        self.weight_sizes = weight_sizes
        self.k_sizes = [[out[i_out].ir.dim for _, i_out, _, _ in p] for p in self.paths]
        self._couplings: dict[Any, list[Any]] = {}
        # depthwise ("uvu") products with one instruction per output block: the weights are
        # one gather per input block and the output one gather of all blocks' products
        feeds = [0] * len(out)
        for ins in tp.instructions:
            feeds[ins.i_out] += 1
        self.gathered = all(i.connection_mode == "uvu" for i in tp.instructions) and all(
            f == 1 for f in feeds
        )
        if self.gathered:
            slo = out.slices()
            self.w_index: list[Any] = []
            source = [0] * out.dim
            t_offset = 0
            for b, (mul, _) in enumerate(self.in1_shapes):
                K = sum(self.k_sizes[b])
                widx = [[0] * K for _ in range(mul)]
                k_offset = 0
                for (_, i_out, _, w_offset), d3 in zip(self.paths[b], self.k_sizes[b], strict=True):
                    for u in range(mul):
                        for k in range(d3):
                            widx[u][k_offset + k] = w_offset + u
                            source[slo[i_out].start + u * d3 + k] = t_offset + u * K + k_offset + k
                    k_offset += d3
                self.w_index.append(torch.tensor(widx, dtype=torch.long).reshape(-1))
                t_offset += mul * K
            self.source = torch.tensor(source, dtype=torch.long)
        # fully connected ("uvw") products: the paths into one output block are one batched
        # product, their channels stacked (sum_p sum_u W_p[u, w] t_p[u, k] over rows (p, u)),
        # instead of one tiny product per path
        self.grouped = not self.gathered and all(
            i.connection_mode == "uvw" for i in tp.instructions
        )
        if self.grouped:
            self.feeders: list[list[tuple[int, int]]] = [[] for _ in out]
            rows: list[list[int]] = [[] for _ in out]
            for b, paths in enumerate(self.paths):
                mul = self.in1_shapes[b][0]
                for j, (_, i_out, _, w_offset) in enumerate(paths):
                    mo = out[i_out].mul
                    self.feeders[i_out].append((b, j))
                    rows[i_out].extend(w_offset + u * mo + v for u in range(mul) for v in range(mo))
            self.w_rows = [torch.tensor(r, dtype=torch.long) for r in rows]

    def _coupling(self, dtype: Any) -> list[Any]:
        if dtype in self._couplings:
            return self._couplings[dtype]
        tp = self.tp
        in1, in2, out = tp.irreps_in1, tp.irreps_in2, tp.irreps_out
        sl1, sl2, slo = in1.slices(), in2.slices(), out.slices()
        # probe: x1 = a unit vector in channel 0 of block b, x2 = a unit vector, weights 1
        C = []
        with torch.no_grad():
            for b, (_, ir1) in enumerate(in1):
                d1 = ir1.dim
                x1 = torch.zeros(d1 * self.d2, in1.dim, dtype=dtype)
                x2 = torch.zeros(d1 * self.d2, self.d2, dtype=dtype)
                for i in range(d1):
                    for j in range(self.d2):
                        x1[i * self.d2 + j, sl1[b].start + i] = 1.0
                        x2[i * self.d2 + j, j] = 1.0
                w = torch.ones(len(x1), tp.weight_numel, dtype=dtype)
                probe = tp(x1, x2, w).reshape(d1, self.d2, out.dim)
                blocks = []
                for index, i_out, _, _ in self.paths[b]:
                    ins = tp.instructions[index]
                    d3 = out[i_out].ir.dim
                    block = torch.zeros(d1, self.d2, d3, dtype=dtype)
                    j = sl2[ins.i_in2]
                    start = slo[i_out].start  # channel 0 of the output block
                    block[:, j, :] = probe[:, j, start : start + d3]
                    blocks.append(block)
                K = torch.cat(blocks, 2) if blocks else torch.zeros(d1, self.d2, 0, dtype=dtype)
                # (d2, d1 * K): x2 @ C gives (E, d1 * K)
                C.append(K.permute(1, 0, 2).reshape(self.d2, -1).contiguous())
        self._couplings[dtype] = C
        return C

    def _block_products(self, x1: Any, x2: Any) -> list[Any]:
        """Per input block ``b``: ``t_b`` (E, m, K_b), the block's channels coupled with x2 for
        every path it feeds (None for a block that feeds none)."""
        E = x1.shape[0]
        C = self._coupling(x1.dtype)
        pieces1 = torch.split(x1, self.in1_sizes, dim=1)
        out: list[Any] = []
        for b, (mul, d1) in enumerate(self.in1_shapes):
            if not self.paths[b]:
                out.append(None)
                continue
            M = (x2 @ C[b]).unflatten(1, (d1, -1))  # not view(E, ...): E may be 0
            out.append(torch.bmm(pieces1[b].reshape(E, mul, d1), M))
        return out

    def unordered(self, x1: Any, x2: Any, w: Any) -> Any:
        """For a depthwise product (``self.gathered``): the output with its columns in this
        class's order, input block by input block; ``out[:, self.source]`` is e3nn's order. A
        caller that only sums over edges first can reorder the (fewer) sums instead."""
        if not self.gathered:
            raise ValueError("unordered() is for depthwise products with one path per output")
        products = [
            t.flatten(1) * w.index_select(1, self.w_index[b])
            for b, t in enumerate(self._block_products(x1, x2))
            if t is not None
        ]
        return torch.cat(products, 1)

    def __call__(self, x1: Any, x2: Any, w: Any) -> Any:
        if self.gathered:
            return self.unordered(x1, x2, w).index_select(1, self.source)
        E = x1.shape[0]
        cut = [
            () if t is None else torch.split(t, self.k_sizes[b], dim=2)
            for b, t in enumerate(self._block_products(x1, x2))
        ]
        if self.grouped:
            blocks = []
            for o, (mo, d3) in enumerate(self.out_shapes):
                if not self.feeders[o]:
                    blocks.append(x1.new_zeros(E, mo * d3))
                    continue
                stacked = torch.cat([cut[b][j] for b, j in self.feeders[o]], 1)
                W = w.index_select(1, self.w_rows[o]).unflatten(1, (-1, mo))
                blocks.append(torch.bmm(W.transpose(1, 2), stacked).reshape(E, mo * d3))
            return torch.cat(blocks, 1)
        weights = torch.split(w, self.weight_sizes, dim=1)
        outs: list[Any] = [None] * len(self.out_shapes)
        for b, (mul, _) in enumerate(self.in1_shapes):
            for (index, i_out, mode, _), piece in zip(self.paths[b], cut[b], strict=True):
                wp = weights[index]
                if mode == "uvu":
                    o = piece * wp.view(E, mul, 1)
                else:  # uvw: (E, m_out, m) @ (E, m, d3)
                    o = torch.bmm(wp.unflatten(1, (mul, -1)).transpose(1, 2), piece)
                o = o.flatten(1)
                outs[i_out] = o if outs[i_out] is None else outs[i_out] + o
        full = [
            o if o is not None else x1.new_zeros(E, mul * d)
            for o, (mul, d) in zip(outs, self.out_shapes, strict=True)
        ]
        return torch.cat(full, 1)


class DenseLinear:
    """An e3nn ``Linear`` without biases as one matrix product ``x @ W``.

    ``W`` (dim_in, dim_out) is the layer's output on the unit vectors, read again whenever the
    layer's weights change (their version counter moves on every in-place update: an optimiser
    step, ``load_state_dict``). Many small per-instruction products become one."""

    def __init__(self, lin: Any) -> None:
        self.lin = lin
        self._key: Any = None
        self._matrix: Any = None

    def matrix(self, dtype: Any) -> Any:
        weight = getattr(self.lin, "weight", None)
        key = (dtype,) if weight is None else (dtype, weight.data_ptr(), weight._version)
        if key != self._key:
            with torch.no_grad():
                eye = torch.eye(self.lin.irreps_in.dim, dtype=dtype)
                self._matrix = self.lin(eye).contiguous()
            self._key = key
        return self._matrix

    def __call__(self, x: Any) -> Any:
        return x @ self.matrix(x.dtype)
