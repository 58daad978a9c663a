"""A small tensor-field network (TFN) built from e3nn, the model EquiGX explains.

The network follows the spec's "Model explained" section:

- edges: a radius graph (``radius``) or a k-nearest-neighbour graph (``k``, neighbours tied with
  the k-th kept; neighbours beyond ``radius`` carry no message because the radial basis is cut
  off there), built with
  ``torch.cdist`` inside each graph of a batch; ``r_ij = p_src - p_dst``;
- direction: spherical harmonics ``Y(r_ij / |r_ij|)`` up to ``l_max`` ("component"
  normalisation); distance: ``sqrt(n_basis) * soft_one_hot_linspace(|r_ij|, 0, radius, n_basis,
  "smooth_finite", cutoff=True)``;
- input node features ``x0_i = concat(h_i, sum_{j->i} Y_ij / sqrt(n_bar))``, over every edge of
  the graph: a kNN neighbour beyond ``radius`` sends no message but its direction counts here;
- each convolution: per-edge weights ``w_ij = MLP(e_ij)`` (no biases, so a cut-off edge sends
  nothing), message ``m_ij = TP(x_src, Y_ij; w_ij)`` (an e3nn tensor product with external
  weights: ``"fully_connected"`` or the depthwise ``"uvu"``), aggregation
  ``sum_j m_ij / sqrt(n_bar)``, an e3nn ``Linear`` (no bias) and, except in the last layer, a
  ``NormActivation`` with a sigmoid;
- the last convolution maps to ``n_classes x 0e``; graph readout ``sum_nodes / sqrt(n_bar)``.

Torch and e3nn are imported when this module is imported; ``trustlab.explain.equigx`` imports
it lazily and a missing e3nn raises ``ConfigError.missing_extra("e3nn", "graph")``.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._lazy import require
from trustlab._results import output_dir, replace_saved
from trustlab.errors import InputError

torch = require("torch", "graph")
o3 = require("e3nn.o3", "graph")
e3nn_nn = require("e3nn.nn", "graph")
e3nn_math = require("e3nn.math", "graph")

__all__ = ["TFNConfig", "TensorFieldNetwork", "PointGraph", "as_graph_tensors"]

TP_KINDS = ("fully_connected", "uvu")
#: Neighbours within this relative distance of the k-th nearest count as tied with it (kept).
KNN_TIE_TOLERANCE = 1e-5


def _count(cfg: Any, name: str, minimum: int) -> bool:
    """Whether ``cfg.name`` is an integer >= ``minimum`` (not a bool); a numpy one is stored as
    a Python int."""
    value = getattr(cfg, name)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        return False
    object.__setattr__(cfg, name, int(value))  # the config is frozen
    return True


def _distance(cfg: Any, name: str) -> bool:
    """Whether ``cfg.name`` is a finite number > 0 (not a bool); a numpy one is stored as a
    Python number."""
    value = getattr(cfg, name)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return False
    if isinstance(value, (int, np.integer)):
        value = int(value)
        if value >= 2**63:  # torch reads a Python int as an int64: beyond it, stored as a float
            try:
                value = float(value)
            except OverflowError:  # 10**400: no number the network computes with
                return False
    elif isinstance(value, np.floating):  # float(): a long double's .item() stays one (no JSON)
        value = float(value)
    if not 0 < value < math.inf:  # as stored: a long double 1e400 is an infinite float
        return False
    object.__setattr__(cfg, name, value)
    return True


@dataclass(frozen=True)
class TFNConfig:
    """The settings of a :class:`TensorFieldNetwork` (saved beside its weights as JSON)."""

    n_classes: int = 2
    n_scalars: int = 1
    mul: int = 8
    l_max: int = 2
    n_layers: int = 2
    radius: float = 5.0
    k: int | None = None
    tp: str = "uvu"
    n_basis: int = 5
    radial_hidden: int = 32
    avg_neighbors: float = 13.67
    both_parities: bool = True
    dtype: str = "float32"

    def __post_init__(self) -> None:
        # numpy numbers are read as Python ones (the JSON config keeps plain numbers); a bool is
        # no count or distance (radius=True built a network of radius 1 whose config said true)
        for name in ("n_classes", "n_scalars", "mul", "n_layers", "n_basis", "radial_hidden"):
            if not _count(self, name, 1):
                raise InputError.bad(name, "a positive integer", getattr(self, name))
        if not _count(self, "l_max", 0):
            raise InputError.bad("l_max", "an integer >= 0", self.l_max)
        if self.k is not None and not _count(self, "k", 1):
            raise InputError.bad("k", "None or a positive integer", self.k)
        # an infinite cut-off zeroes every radial basis function: no edge would carry a message
        if self.dtype not in ("float32", "float64"):
            raise InputError.bad("dtype", "'float32' or 'float64'", self.dtype)
        if not _distance(self, "radius"):
            raise InputError.bad("radius", "a finite positive number", self.radius)
        # the radial basis spans 0..radius in the network's dtype: beyond its largest number
        # (1e39 in float32) the first forward pass stopped on torch's overflow
        largest = torch.finfo(getattr(torch, self.dtype)).max
        if self.radius > largest:
            raise InputError.bad(
                "radius", f"a positive number at most {largest:.4g} (dtype {self.dtype})",
                self.radius,
            )  # fmt: skip
        if self.tp not in TP_KINDS:
            raise InputError.bad("tp", f"one of {TP_KINDS}", self.tp)
        if not _distance(self, "avg_neighbors"):
            raise InputError.bad("avg_neighbors", "a finite positive number", self.avg_neighbors)

    @property
    def sh_irreps(self) -> Any:
        return o3.Irreps.spherical_harmonics(self.l_max)

    @property
    def hidden_irreps(self) -> Any:
        parts = []
        for ell in range(self.l_max + 1):
            natural = (-1) ** ell
            parities = (natural, -natural) if self.both_parities else (natural,)
            for p in parities:
                parts.append((self.mul, (ell, p)))
        return o3.Irreps(parts)


@dataclass(frozen=True)
class PointGraph:
    """A point cloud: positions ``pos`` (n, 3), scalar node features ``x`` (n, f) and an optional
    ``batch`` vector (n,) of graph indices (0 .. n_graphs - 1) for several graphs at once."""

    pos: Any
    x: Any
    batch: Any = None


def _numbers(value: Any, name: str, expected: str, dtype: Any) -> Any:
    try:
        return torch.as_tensor(value, dtype=dtype)
    except (TypeError, ValueError, RuntimeError) as exc:  # strings, ragged lists, objects
        raise InputError.bad(
            name, f"numbers: {expected}", f"{type(value).__name__} ({exc})"
        ) from exc


def _plain(value: Any) -> Any:
    """A pandas DataFrame or Series as its numpy array; anything else as it is."""
    if type(value).__module__.startswith("pandas") and hasattr(value, "to_numpy"):
        return value.to_numpy(copy=True)  # writable: torch warns on a read-only view
    return value


def _check_finite(given: Any, tensor: Any, name: str, what: str) -> None:
    """NaN or infinity in ``tensor`` is refused; finite values that overflowed in the cast to the
    network's float32 (|value| > 3.4e38) are named as such, not as NaN or infinity."""
    if torch.isfinite(tensor).all():
        return
    wide = torch.as_tensor(given, dtype=torch.float64)
    if torch.isfinite(wide).all():
        top = float(wide.abs().max())
        limit = torch.finfo(tensor.dtype).max
        kind = str(tensor.dtype).removeprefix("torch.")
        raise InputError.bad(
            name, f"{what} within {kind}'s range (|value| <= {limit:.3g}) for this "
            "network", f"values up to {top:.3g}",
        )  # fmt: skip
    raise InputError.bad(name, f"finite {what}", "NaN or infinity")


def as_graph_tensors(graph: Any, dtype: Any = None) -> tuple[Any, Any, Any]:
    """``(pos, x, batch)`` as tensors from a :class:`PointGraph`, a dict or any object with
    ``pos`` and ``x`` (and optionally ``batch``) attributes; bad shapes raise InputError."""
    if isinstance(graph, dict):
        get = graph.get
    else:

        def get(name: str, default: Any = None) -> Any:
            return getattr(graph, name, default)

    # a pandas frame or series (columns x, y, z) as its numbers: torch cannot read one
    pos, x, batch = (_plain(get(name)) for name in ("pos", "x", "batch"))
    given_pos, given_x = pos, x
    if pos is None:
        raise InputError.bad("graph.pos", "node positions of shape (n, 3)", graph)
    pos = _numbers(pos, "graph.pos", "node positions of shape (n, 3)", dtype)
    if pos.ndim != 2 or pos.shape[1] != 3 or pos.shape[0] < 1:
        raise InputError.bad("graph.pos", "node positions of shape (n, 3)", tuple(pos.shape))
    _check_finite(given_pos, pos, "graph.pos", "positions")
    if x is None:
        raise InputError.bad("graph.x", "scalar node features of shape (n, f)", None)
    x = _numbers(x, "graph.x", "scalar node features of shape (n, f)", pos.dtype)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] != pos.shape[0]:
        raise InputError.bad(
            "graph.x", f"node features of shape ({pos.shape[0]}, f)", tuple(x.shape)
        )
    _check_finite(given_x, x, "graph.x", "node features")
    if batch is None:
        batch = torch.zeros(pos.shape[0], dtype=torch.long)
    else:
        batch = torch.as_tensor(batch, dtype=torch.long)
        if batch.shape != (pos.shape[0],) or (batch.numel() and batch.min() < 0):
            raise InputError.bad(
                "graph.batch", f"graph indices >= 0 of shape ({pos.shape[0]},)", batch
            )
    return pos, x, batch


class _Conv(torch.nn.Module):
    """One TFN convolution: radial MLP, tensor product, aggregation, Linear, NormActivation."""

    def __init__(self, cfg: TFNConfig, irreps_in: Any, irreps_target: Any, last: bool) -> None:
        super().__init__()
        sh = cfg.sh_irreps
        self.irreps_in = o3.Irreps(irreps_in)
        if cfg.tp == "fully_connected":
            self.tp = o3.FullyConnectedTensorProduct(
                self.irreps_in, sh, irreps_target, shared_weights=False, internal_weights=False
            )
        else:
            wanted = {ir for _, ir in irreps_target}
            outs, instructions = [], []
            for i1, (mul, ir1) in enumerate(self.irreps_in):
                for i2, (_, ir2) in enumerate(sh):
                    for ir_out in ir1 * ir2:
                        if ir_out in wanted:
                            instructions.append((i1, i2, len(outs), "uvu", True))
                            outs.append((mul, ir_out))
            self.tp = o3.TensorProduct(
                self.irreps_in,
                sh,
                o3.Irreps(outs),
                instructions,
                shared_weights=False,
                internal_weights=False,
            )
        hidden = cfg.radial_hidden
        self.radial = torch.nn.Sequential(
            torch.nn.Linear(cfg.n_basis, hidden, bias=False),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, self.tp.weight_numel, bias=False),
        )
        self.lin = o3.Linear(self.tp.irreps_out, irreps_target)
        self.act = None if last else e3nn_nn.NormActivation(irreps_target, torch.sigmoid)
        self.irreps_out = o3.Irreps(irreps_target)


class TensorFieldNetwork(torch.nn.Module):
    """An e3nn tensor-field network for graph classification (see the module docstring).

    Parameters
    ----------
    config : TFNConfig, optional
        The settings; keyword arguments override its fields (``TensorFieldNetwork(n_classes=3)``).
        ``dtype="float64"`` builds e3nn's coupling coefficients in float64 (exact equivariance
        to rounding); do not build in float32 and cast.

    Examples
    --------
    >>> import torch
    >>> net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, n_layers=2, k=4)
    >>> g = PointGraph(pos=torch.randn(6, 3), x=torch.ones(6, 1))
    >>> net(g).shape
    torch.Size([1, 3])
    """

    def __init__(self, config: TFNConfig | None = None, **overrides: Any) -> None:
        super().__init__()
        cfg = config or TFNConfig()
        if overrides:
            cfg = TFNConfig(**{**asdict(cfg), **overrides})
        self.config = cfg
        dtype = getattr(torch, cfg.dtype)
        before = torch.get_default_dtype()
        # e3nn computes its Clebsch-Gordan buffers in the default dtype: build in the model's
        # own dtype (a float32 build cast to float64 is equivariant to ~1e-8 only)
        torch.set_default_dtype(dtype)
        try:
            self._build(cfg)
        finally:
            torch.set_default_dtype(before)
        self.to(dtype)

    def _build(self, cfg: TFNConfig) -> None:
        self.sh_irreps = cfg.sh_irreps
        self.input_irreps = o3.Irreps(f"{cfg.n_scalars}x0e") + self.sh_irreps
        layers = []
        irreps = self.input_irreps
        for k in range(cfg.n_layers):
            last = k == cfg.n_layers - 1
            target = o3.Irreps(f"{cfg.n_classes}x0e") if last else cfg.hidden_irreps
            layers.append(_Conv(cfg, irreps, target, last))
            irreps = target
        self.layers = torch.nn.ModuleList(layers)

    # ---------------------------------------------------------------- pieces
    def edges(self, pos: Any, batch: Any) -> Any:
        """The edge index ``(2, E)`` (row 0: source j, row 1: destination i) of the radius or
        kNN graph within each graph of the batch, without self-loops.

        The kNN graph keeps every neighbour tied with the k-th nearest (within ``1e-5`` of its
        distance, relative): symmetric point sets (a cube's vertices) have exact ties, and
        breaking them by rounding would make the graph, and the prediction, depend on the
        rotation, the node order and whether the graph is explained alone or in a batch.
        Distances are computed as differences (not through a matrix product) for the same
        reason; edges are ordered by destination, then source.
        """
        with torch.no_grad():
            if batch.numel() == 0:
                return torch.zeros(2, 0, dtype=torch.long)
            parts = []
            for g in torch.unique(batch):  # one graph at a time: memory and time linear in graphs
                nodes = torch.nonzero(batch == g, as_tuple=True)[0]
                src, dst = self._graph_edges(pos[nodes])
                parts.append(torch.stack([nodes[src], nodes[dst]]))
        return torch.cat(parts, dim=1)

    def _graph_edges(self, pos: Any) -> tuple[Any, Any]:
        cfg = self.config
        n = len(pos)
        d = torch.cdist(pos, pos, compute_mode="donot_use_mm_for_euclid_dist")
        ok = ~torch.eye(n, dtype=torch.bool, device=pos.device)
        if cfg.k is None:
            dst, src = torch.nonzero(ok & (d < cfg.radius), as_tuple=True)
            return src, dst
        kk = min(cfg.k, n - 1)
        if kk < 1:
            return torch.zeros(0, dtype=torch.long), torch.zeros(0, dtype=torch.long)
        d = d.masked_fill(~ok, math.inf)
        kth = torch.topk(d, kk, dim=1, largest=False).values[:, -1:]  # (n, 1) per dst
        dst, src = torch.nonzero(ok & (d <= kth * (1 + KNN_TIE_TOLERANCE)), as_tuple=True)
        return src, dst

    def geometry(self, pos: Any, edge_index: Any) -> tuple[Any, Any]:
        """``(Y, emb)``: spherical harmonics (E, sh_dim) and radial embedding (E, n_basis)."""
        cfg = self.config
        vec = pos[edge_index[0]] - pos[edge_index[1]]
        Y = o3.spherical_harmonics(self.sh_irreps, vec, normalize=True, normalization="component")
        emb = e3nn_math.soft_one_hot_linspace(
            vec.norm(dim=1), 0.0, cfg.radius, cfg.n_basis, basis="smooth_finite", cutoff=True
        ) * math.sqrt(cfg.n_basis)
        return Y, emb.to(pos.dtype)

    def embed(self, h: Any, Y: Any, edge_index: Any) -> Any:
        """``x0 = concat(h, sum_{j->i} Y_ij / sqrt(n_bar))``."""
        agg = torch.zeros(h.shape[0], Y.shape[1], dtype=Y.dtype).index_add(0, edge_index[1], Y)
        return torch.cat([h, agg / math.sqrt(self.config.avg_neighbors)], dim=1)

    def aggregate(self, m: Any, edge_index: Any, n: int) -> Any:
        """``sum_{j->i} m_ij / sqrt(n_bar)``."""
        out = torch.zeros(n, m.shape[1], dtype=m.dtype).index_add(0, edge_index[1], m)
        return out / math.sqrt(self.config.avg_neighbors)

    def readout(self, z: Any, batch: Any) -> Any:
        """Per-graph sums of the node outputs divided by ``sqrt(n_bar)``."""
        n_graphs = int(batch.max()) + 1 if batch.numel() else 0
        out = torch.zeros(n_graphs, z.shape[1], dtype=z.dtype).index_add(0, batch, z)
        return out / math.sqrt(self.config.avg_neighbors)

    # ---------------------------------------------------------------- forward
    def forward(
        self,
        graph: Any,
        *,
        edge_mask: Any = None,
        mask_order: Any = None,
        return_hidden: bool = False,
    ) -> Any:
        """Class logits ``(n_graphs, n_classes)`` of a :class:`PointGraph` (or dict).

        Parameters
        ----------
        graph : PointGraph or dict
        edge_mask : tensor of shape (E,), optional
            Multiplies every edge's spherical harmonics and messages (a soft edge mask, as the
            GNNExplainer baseline learns); ``E`` is the edge count of :meth:`edges`.
        mask_order : iterable of int, optional
            Angular orders l whose components are zeroed in the spherical harmonics and in the
            hidden features (the spec's ``mask_order``: which l the prediction needs).
        return_hidden : bool
            Also return the node features entering the last convolution (for Grad-CAM).
        """
        dtype = next(self.parameters()).dtype
        pos, h, batch = as_graph_tensors(graph, dtype)
        if h.shape[1] != self.config.n_scalars:
            raise InputError.bad(
                "graph.x", f"{self.config.n_scalars} scalar features per node", h.shape[1]
            )
        edge_index = self.edges(pos, batch)
        Y, emb = self.geometry(pos, edge_index)
        orders = self._check_orders(mask_order)
        if orders:
            Y = Y * self._order_keep(self.sh_irreps, orders, dtype)
        if edge_mask is not None:
            edge_mask = torch.as_tensor(edge_mask, dtype=dtype)
            if edge_mask.shape != (edge_index.shape[1],):
                raise InputError.bad(
                    "edge_mask", f"a tensor of shape ({edge_index.shape[1]},)", edge_mask.shape
                )
            Y = Y * edge_mask[:, None]
        x = self.embed(h, Y, edge_index)
        hidden = x
        for layer in self.layers:
            hidden = x
            m = layer.tp(x[edge_index[0]], Y, layer.radial(emb))
            if edge_mask is not None:
                m = m * edge_mask[:, None]
            x = layer.lin(self.aggregate(m, edge_index, len(pos)))
            if layer.act is not None:
                x = layer.act(x)
                if orders:
                    x = x * self._order_keep(layer.act.irreps_in, orders, dtype)
        out = self.readout(x, batch)
        return (out, hidden) if return_hidden else out

    def _check_orders(self, mask_order: Any) -> tuple[int, ...]:
        if mask_order is None:
            return ()
        try:
            orders = tuple(sorted({int(v) for v in mask_order}))
        except (TypeError, ValueError) as exc:
            raise InputError.bad(
                "mask_order", "an iterable of angular orders l", mask_order
            ) from exc
        if any(not 0 <= v <= self.config.l_max for v in orders):
            raise InputError.bad(
                "mask_order", f"orders in 0..{self.config.l_max} (the model's l_max)", orders
            )
        return orders

    @staticmethod
    def _order_keep(irreps: Any, orders: tuple[int, ...], dtype: Any) -> Any:
        keep = []
        for mul, ir in irreps:
            keep += [0.0 if ir.l in orders else 1.0] * (mul * ir.dim)
        return torch.tensor(keep, dtype=dtype)

    # ---------------------------------------------------------------- files
    def save(self, path: str | Any) -> Path:
        """Save into the folder ``path``: ``config.json`` and ``weights.safetensors``.

        Examples
        --------
        >>> import tempfile
        >>> net = TensorFieldNetwork(mul=2, l_max=1)
        >>> with tempfile.TemporaryDirectory() as d:
        ...     _ = net.save(d)
        ...     TensorFieldNetwork.load(d).config == net.config
        True
        """
        from safetensors.torch import save_file

        # '' (the working directory), a file in the way or a folder that cannot be made (no
        # permission) is refused naming path, as the other savers do
        folder = output_dir(path, "path")
        text = json.dumps(asdict(self.config), indent=2) + "\n"
        state = {k: v.detach().contiguous() for k, v in self.state_dict().items()}
        # whole or absent (replace_saved): stopped in the weights' write, the earlier network
        # stays whole; later, the folder holds no config.json, so nothing loads (never the new
        # weights under the old radius and settings)
        replace_saved(
            folder,
            {"weights.safetensors": lambda tmp: save_file(state, str(tmp))},
            {"config.json": text},
        )
        return folder

    @classmethod
    def load(cls, path: str | Any) -> TensorFieldNetwork:
        """Load a network saved by :meth:`save`."""
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        folder = Path(path)
        expected = "a folder written by TensorFieldNetwork.save (config.json, weights.safetensors)"
        if not (folder / "config.json").is_file():
            raise InputError.bad("path", expected, path)
        try:
            cfg = TFNConfig(**json.loads((folder / "config.json").read_text()))
            state = load_file(str(folder / "weights.safetensors"))
            net = cls(cfg)
            net.load_state_dict(state)
        except (OSError, ValueError, TypeError, RuntimeError, SafetensorError) as exc:
            # a damaged or incomplete folder (JSON, unknown settings, weights missing or not
            # matching the settings)
            raise InputError.bad("path", expected, f"{folder} ({exc})") from exc
        return net
