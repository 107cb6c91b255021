#!/usr/bin/python3
"""Draw an impulse figure spec with matplotlib (Agg backend).

Usage: impulse_plot.py FIGURE.npz OUTPUT_STEM

FIGURE.npz is written by imp_figure_save(): its "meta" member is the JSON
spec (format "impulse-figure-1": grid, panel decorations, elements), and
every plotted array is a float64 member named in the spec. The script
writes OUTPUT_STEM.png and OUTPUT_STEM.svg, each through a temporary file
in the same directory that is fsync'ed and renamed, so a reader never sees
a half-written figure.

To restyle a figure, edit the spec or this script and rerun it on the .npz.

Exit status: 0 ok, 2 usage or bad spec, 3 numpy/matplotlib missing.
"""
import json
import os
import sys

MISSING_DEPENDENCY = 3


def split_style(style, default_fmt):
    """'--|tab:red' -> ('--', 'tab:red'); '' or None -> (default_fmt, None)."""
    if not style:
        return default_fmt, None
    fmt, _, color = style.partition("|")
    return (fmt or default_fmt), (color or None)


def draw_element(ax, el, data, np):
    kind = el["kind"]
    label = el.get("label")
    arr = lambda role: np.asarray(data[el[role]], dtype=float)
    if kind == "line":
        fmt, color = split_style(el.get("style"), "-")
        ax.plot(arr("x"), arr("y"), fmt, color=color, label=label)
    elif kind == "scatter":
        marker, color = split_style(el.get("style"), "o")
        ax.scatter(arr("x"), arr("y"), marker=marker, color=color, s=14, label=label)
    elif kind == "errorbar":
        fmt, color = split_style(el.get("style"), "o")
        ax.errorbar(arr("x"), arr("y"), yerr=arr("yerr"), fmt=fmt, color=color, capsize=3, label=label)
    elif kind == "bars":
        cats, groups = el["categories"], el["groups"]
        values = arr("values").reshape(len(groups), len(cats))
        errors = arr("errors").reshape(len(groups), len(cats)) if "errors" in el else None
        idx = np.arange(len(cats))
        width = 0.8 / len(groups)
        for g, name in enumerate(groups):
            ax.bar(idx + (g - (len(groups) - 1) / 2) * width, values[g], width,
                   yerr=None if errors is None else errors[g], capsize=3, label=name)
        ax.set_xticks(idx)
        ax.set_xticklabels(cats)
    elif kind == "histogram":
        _, color = split_style(el.get("style"), "")
        ax.hist(arr("x"), bins=int(el["bins"]), density=bool(el["density"]), color=color,
                alpha=0.6, histtype="stepfilled", edgecolor="black", linewidth=0.5, label=label)
    elif kind == "fill_between":
        _, color = split_style(el.get("style"), "")
        ax.fill_between(arr("x"), arr("y_lo"), arr("y_hi"), color=color, alpha=float(el["alpha"]),
                        linewidth=0, label=label)
    elif kind == "refline":
        fmt, color = split_style(el.get("style"), "--")
        line = ax.axvline if el["vertical"] else ax.axhline
        line(float(el["value"]), linestyle=fmt, color=color or "gray", linewidth=1, label=label)
    elif kind == "polygon":
        from matplotlib.patches import Polygon
        fmt, color = split_style(el.get("style"), "-")
        fill = bool(el["fill"])
        patch = Polygon(np.column_stack([arr("x"), arr("y")]), closed=True, fill=fill,
                        facecolor=color, edgecolor=color or "black", alpha=0.5 if fill else 1.0,
                        linestyle=fmt if fmt in ("-", "--", ":", "-.") else "-", label=label)
        ax.add_patch(patch)
    elif kind == "ellipse":
        from matplotlib.patches import Ellipse
        fmt, color = split_style(el.get("style"), "-")
        ax.add_patch(Ellipse((el["cx"], el["cy"]), el["width"], el["height"], angle=el["angle"],
                             fill=False, edgecolor=color or "black",
                             linestyle=fmt if fmt in ("-", "--", ":", "-.") else "-", label=label))
    elif kind == "text":
        ax.text(el["x"], el["y"], el["text"], fontsize="small")
    else:
        raise ValueError(f"unknown element kind {kind!r}")
    return label is not None or kind == "bars"


def render(spec, data, plt, np):
    if spec.get("format") != "impulse-figure-1":
        raise ValueError(f"unknown figure format {spec.get('format')!r}")
    rows, cols = int(spec["rows"]), int(spec["cols"])
    fig, axes = plt.subplots(rows, cols, figsize=(spec["width"], spec["height"]), squeeze=False,
                             layout="constrained")
    axes = axes.ravel()
    has_legend = [False] * len(axes)
    for el in spec["elements"]:
        p = int(el["panel"])
        has_legend[p] |= draw_element(axes[p], el, data, np)
    for p, (ax, panel) in enumerate(zip(axes, spec["panels"])):
        if panel.get("title"):
            ax.set_title(panel["title"])
        if panel.get("xlabel"):
            ax.set_xlabel(panel["xlabel"])
        if panel.get("ylabel"):
            ax.set_ylabel(panel["ylabel"])
        if panel.get("x_log"):
            ax.set_xscale("log")
        if panel.get("y_log"):
            ax.set_yscale("log")
        # patches do not trigger autoscaling by themselves
        ax.autoscale_view()
        lim = panel.get("limits") or [None] * 4
        if lim[0] is not None or lim[1] is not None:
            ax.set_xlim(lim[0], lim[1])
        if lim[2] is not None or lim[3] is not None:
            ax.set_ylim(lim[2], lim[3])
        if panel.get("equal"):
            ax.set_aspect("equal", adjustable="datalim")
        if has_legend[p]:
            ax.legend(fontsize="small")
        ax.grid(True, alpha=0.3)
    if spec.get("title"):
        fig.suptitle(spec["title"])
    return fig


def save_atomic(fig, path, fmt):
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            # no timestamps: the same figure gives the same file
            fig.savefig(f, format=fmt, dpi=150, metadata={"Date": None} if fmt == "svg" else None)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main(argv):
    if len(argv) != 3:
        print("usage: impulse_plot.py FIGURE.npz OUTPUT_STEM", file=sys.stderr)
        return 2
    try:
        import numpy as np
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print(f"impulse_plot: numpy/matplotlib not available for {sys.executable}: {e}", file=sys.stderr)
        return MISSING_DEPENDENCY
    matplotlib.rcParams["svg.hashsalt"] = "impulse"  # stable SVG element ids
    npz_path, stem = argv[1], argv[2]
    with np.load(npz_path, allow_pickle=False) as data:
        if "meta" not in data.files:
            print(f"impulse_plot: {npz_path} has no 'meta' figure spec", file=sys.stderr)
            return 2
        spec = json.loads(str(data["meta"]))
        fig = render(spec, data, plt, np)
    save_atomic(fig, stem + ".png", "png")
    save_atomic(fig, stem + ".svg", "svg")
    plt.close(fig)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (KeyError, ValueError, OSError) as e:
        # one line, so the C caller can quote it
        print(f"impulse_plot: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(2)
