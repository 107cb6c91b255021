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
import math
import os
import sys

MISSING_DEPENDENCY = 3

# Okabe-Ito: distinguishable under the common colour-vision deficiencies.
# Specs name colours C0..C7 (the cycle), tab:* or single letters; all map here.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
COLOR_ALIASES = {"tab:blue": 0, "b": 0, "blue": 0, "tab:orange": 1, "orange": 1, "tab:green": 2, "g": 2,
                 "green": 2, "tab:red": 3, "r": 3, "red": 3, "tab:purple": 4, "m": 4, "purple": 4,
                 "tab:cyan": 5, "c": 5, "tab:olive": 6, "y": 6}
LINESTYLES = ["-", "--", "-.", ":"]
# curves named like this are the reference: drawn first, wide and light, under the others
REFERENCE_LABELS = ("truth", "true", "ground truth", "measured")


def map_color(color):
    if color is None:
        return None
    if color.startswith("C") and color[1:].isdigit():
        return OKABE_ITO[int(color[1:]) % len(OKABE_ITO)]
    if color in COLOR_ALIASES:
        return OKABE_ITO[COLOR_ALIASES[color]]
    return color


class Styler:
    """One colour per model across the whole figure (in order of first
    appearance, the C0, C1, ... of the spec) and a line style per model, so a
    model looks the same in every panel. Labels "model, body N" and
    "model: term" keep the model's colour and take the line style of the body
    or the term, so curves on top of each other stay distinguishable."""

    def __init__(self):
        self.models, self.terms = [], []

    def __call__(self, label):
        label = label or ""
        model, _, body = label.partition(", body ")
        term = ""
        if not body:
            model, _, term = label.partition(": ")
        if model not in self.models:
            self.models.append(model)
        i = self.models.index(model)
        if body.isdigit():
            ls = LINESTYLES[(int(body) - 1) % len(LINESTYLES)]
        elif term:
            if term not in self.terms:
                self.terms.append(term)
            ls = LINESTYLES[(self.terms.index(term) + 1) % len(LINESTYLES)]
        else:
            ls = LINESTYLES[i % len(LINESTYLES)]
        return OKABE_ITO[i % 7], ls


def is_reference(label):
    return label is not None and label.lower() in REFERENCE_LABELS


def split_style(style, default_fmt):
    """'--|tab:red' -> ('--', 'tab:red'); '' or None -> (default_fmt, None)."""
    if not style:
        return default_fmt, None
    fmt, _, color = style.partition("|")
    return (fmt or default_fmt), (color or None)


def draw_element(ax, el, data, np, styler):
    kind = el["kind"]
    label = el.get("label")
    arr = lambda role: np.asarray(data[el[role]], dtype=float)
    if kind == "line":
        style = el.get("style")
        fmt, color = split_style(style, "-")
        color = map_color(color)
        if is_reference(label):
            ax.plot(arr("x"), arr("y"), "-", color=color if color not in (None, "k") else "0.55", linewidth=3.2,
                    alpha=0.75, zorder=1, label=label, solid_capstyle="round")
        elif not style:
            c, ls = styler(label)
            ax.plot(arr("x"), arr("y"), linestyle=ls, color=c, linewidth=1.5, alpha=0.9, zorder=3, label=label)
        else:
            ax.plot(arr("x"), arr("y"), fmt, color=color, linewidth=1.5, zorder=2, label=label)
    elif kind == "line3d":
        fmt, color = split_style(el.get("style"), "-")
        color = map_color(color)
        if not el.get("style"):
            c, ls = styler(label)
            ax.plot(arr("x"), arr("y"), arr("z"), linestyle=ls, color=c, linewidth=1.5, alpha=0.9, label=label)
        else:
            ax.plot(arr("x"), arr("y"), arr("z"), fmt, color=color, linewidth=1.5, label=label)
    elif kind == "scatter":
        marker, color = split_style(el.get("style"), "o")
        x = arr("x")
        few = x.size == 1 and marker in ("X", "*", "P")  # an annotated point, not a series
        # dense series: small translucent markers, so those beneath show through
        # an annotated star is drawn larger than a cross, so one on top of the other leaves both visible
        ax.scatter(x, arr("y"), marker=marker, color=map_color(color),
                   s=(200 if marker == "*" else 80) if few else 8 if x.size >= 200 else 14,
                   alpha=None if few or x.size < 50 else 0.5 if x.size >= 200 else 0.75,
                   zorder=6 if few else 2, edgecolors="white" if few and marker not in "x+|_." else None,
                   linewidths=0.5 if few else None, label=label)
    elif kind == "errorbar":
        fmt, color = split_style(el.get("style"), "o")
        # series at the same x are drawn side by side (dodge: a factor on a
        # log axis, else an offset), so their error bars do not hide each other
        x = arr("x")
        x = x * el["dodge"] if el.get("dodge_log") else x + el.get("dodge", 0.0)
        ax.errorbar(x, arr("y"), yerr=arr("yerr"), fmt=fmt, color=map_color(color), capsize=3, label=label)
    elif kind == "bars":
        cats, groups = el["categories"], el["groups"]
        values = arr("values").reshape(len(groups), len(cats))
        errors = arr("errors").reshape(len(groups), len(cats)) if "errors" in el else None
        idx = np.arange(len(cats))
        width = 0.8 / len(groups)
        for g, name in enumerate(groups):
            ax.bar(idx + (g - (len(groups) - 1) / 2) * width, values[g], width,
                   yerr=None if errors is None else errors[g], capsize=3, label=name,
                   color=OKABE_ITO[g % len(OKABE_ITO)])
        ax.set_xticks(idx)
        # long or many category names: slanted, so neighbours do not overlap
        slant = len(cats) * max(len(c) for c in cats) > 60
        ax.set_xticklabels(cats, rotation=25 if slant else 0, ha="right" if slant else "center")
    elif kind == "histogram":
        _, color = split_style(el.get("style"), "")
        ax.hist(arr("x"), bins=int(el["bins"]), density=bool(el["density"]), color=map_color(color),
                alpha=0.6, histtype="stepfilled", edgecolor="black", linewidth=0.5, label=label)
    elif kind == "fill_between":
        _, color = split_style(el.get("style"), "")
        ax.fill_between(arr("x"), arr("y_lo"), arr("y_hi"), color=map_color(color), alpha=float(el["alpha"]),
                        linewidth=0, label=label)
    elif kind == "refline":
        fmt, color = split_style(el.get("style"), "--")
        line = ax.axvline if el["vertical"] else ax.axhline
        line(float(el["value"]), linestyle=fmt, color=map_color(color) or "gray", linewidth=1, label=label)
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


def draw_legend(ax, **kw):
    """The axes' legend with each label once (a curve drawn per body or per segment carries the same label)."""
    handles, labels = ax.get_legend_handles_labels()
    seen = {}
    for h, lab in zip(handles, labels):
        seen.setdefault(lab, h)
    return ax.legend(list(seen.values()), list(seen.keys()), **kw)


def layout(spec):
    """Panels that have something to show, on a grid of at most 2:1 (a page's
    width): empty panels are dropped, a strip of n > 2 panels becomes
    ceil(n / 2) rows of 2, and a wider figure is narrowed to 2:1."""
    used = sorted({int(el["panel"]) for el in spec["elements"]})
    rows, cols = int(spec["rows"]), int(spec["cols"])
    width, height = float(spec["width"]), float(spec["height"])
    n = max(len(used), 1)
    if n < rows * cols or (rows == 1 and cols > 2):
        cols = 1 if n == 1 or cols == 1 else 2
        rows = math.ceil(n / cols)
        width = 11.0 if cols == 2 else 7.0
        height = 3.4 * rows + (0.5 if spec.get("title") else 0.0)
    width = min(width, 2.0 * height)
    return used, rows, cols, width, height


def render(spec, data, plt, np):
    if spec.get("format") != "impulse-figure-1":
        raise ValueError(f"unknown figure format {spec.get('format')!r}")
    used, rows, cols, width, height = layout(spec)
    fig = plt.figure(figsize=(width, height), layout="constrained")
    grid = fig.add_gridspec(rows, cols)
    axes = []
    for i in range(len(used)):
        r, c = divmod(i, cols)
        # an odd panel out takes the whole last row: no blank slot beside it
        last_alone = i == len(used) - 1 and c == 0 and cols > 1
        three_d = {"projection": "3d"} if spec["panels"][used[i]].get("three_d") else {}
        axes.append(fig.add_subplot(grid[r, :] if last_alone else grid[r, c], **three_d))
    axes_of = {p: axes[i] for i, p in enumerate(used)}
    has_legend = {p: False for p in used}
    styler = Styler()
    # errorbar series of a panel: spread over 6 % of a decade (log x) or of
    # the smallest x spacing
    bars = {}
    for el in spec["elements"]:
        if el["kind"] == "errorbar":
            bars.setdefault(int(el["panel"]), []).append(el)
    for p, els in bars.items():
        n = len(els)
        if n < 2:
            continue
        log = bool(spec["panels"][p].get("x_log"))
        xs = sorted({float(v) for el in els for v in np.asarray(data[el["x"]], dtype=float).ravel()})
        gap = min((b - a for a, b in zip(xs, xs[1:])), default=1.0)
        for j, el in enumerate(els):
            k = j - (n - 1) / 2
            if log:
                el["dodge_log"], el["dodge"] = True, 10 ** (0.06 * k / n * 2)
            else:
                el["dodge"] = 0.3 * gap * k / n
    # reference curves first, so that they sit under the others
    elements = sorted(spec["elements"], key=lambda el: 0 if is_reference(el.get("label")) else 1)
    for el in elements:
        p = int(el["panel"])
        has_legend[p] |= draw_element(axes_of[p], el, data, np, styler)
    # the same legend in several panels: drawn once, in the first of them
    labels = {p: tuple(dict.fromkeys(axes_of[p].get_legend_handles_labels()[1])) for p in used if has_legend[p]}
    repeated = [p for p in labels if len(labels) > 1 and len(set(labels.values())) == 1]
    # a panel whose entries all stand in an earlier panel's legend (a model
    # looks the same in every panel) needs none of its own
    covered = {p for i, p in enumerate(labels) if p not in repeated and
               any(set(labels[p]) <= set(labels[q]) for q in list(labels)[:i])}
    for p in used:
        ax, panel = axes_of[p], spec["panels"][p]
        if panel.get("title"):
            ax.set_title(panel["title"])
        if panel.get("xlabel"):
            ax.set_xlabel(panel["xlabel"])
        if panel.get("ylabel"):
            ax.set_ylabel(panel["ylabel"])
        if panel.get("zlabel"):
            ax.set_zlabel(panel["zlabel"])
        if panel.get("x_log"):
            ax.set_xscale("log")
        if panel.get("y_log"):
            ax.set_yscale("log")
            from matplotlib.ticker import LogFormatterSciNotation
            # label intermediate ticks too when the range spans few decades
            ax.yaxis.set_minor_formatter(LogFormatterSciNotation(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
        # patches do not trigger autoscaling by themselves
        ax.autoscale_view()
        lim = panel.get("limits") or [None] * 4
        if lim[0] is not None or lim[1] is not None:
            ax.set_xlim(lim[0], lim[1])
        if lim[2] is not None or lim[3] is not None:
            ax.set_ylim(lim[2], lim[3])
        if panel.get("yticks"):
            ax.set_yticks([v for v, _ in panel["yticks"]], [t for _, t in panel["yticks"]])
        if panel.get("equal") and not panel.get("three_d"):
            ax.set_aspect("equal", adjustable="datalim")
        if has_legend[p] and p in repeated and len(labels[p]) > 6:
            # a long legend shared by the panels: once, beside the last of
            # them, where it hides no data
            if p == repeated[-1]:
                draw_legend(ax, fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
        elif has_legend[p] and not (p in repeated and p != repeated[0]) and p not in covered:
            draw_legend(ax, fontsize="small", framealpha=0.85)
        ax.grid(True, alpha=0.3)
    if spec.get("title"):
        fig.suptitle(spec["title"])
    move_hiding_legends(fig, axes, np)
    return fig


def legend_hides_data(ax, legend, renderer, np):
    """True if a plotted point, or part of a bar, of the axes falls under its
    legend."""
    box = legend.get_window_extent(renderer)
    clip = ax.get_window_extent(renderer)
    for patch in ax.patches:
        r = patch.get_window_extent(renderer)
        if r.x0 < box.x1 and box.x0 < r.x1 and r.y0 < box.y1 and box.y0 < r.y1:
            return True
    pts = [line.get_xydata() for line in ax.get_lines()]
    pts += [c.get_offsets() for c in ax.collections if len(c.get_offsets())]
    for xy in pts:
        xy = np.asarray(xy, dtype=float).reshape(-1, 2)
        xy = xy[np.isfinite(xy).all(axis=1)]
        if not len(xy):
            continue
        d = ax.transData.transform(xy)
        seen = (d[:, 0] >= clip.x0) & (d[:, 0] <= clip.x1) & (d[:, 1] >= clip.y0) & (d[:, 1] <= clip.y1)
        under = (d[:, 0] >= box.x0) & (d[:, 0] <= box.x1) & (d[:, 1] >= box.y0) & (d[:, 1] <= box.y1)
        if (seen & under).any():
            return True
    return False


def move_hiding_legends(fig, axes, np):
    """A legend inside a panel that hides some of its data (no free corner
    for "best") goes under the panel instead, below its axis label, in
    columns (the panel's width stays that of the others in its column)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in axes:
        legend = ax.get_legend()
        if legend is None or legend.get_bbox_to_anchor() != ax.bbox or ax.name == "3d":
            continue
        if legend_hides_data(ax, legend, renderer, np):
            n = len(legend.get_texts())
            legend.remove()
            bottom = ax.transAxes.inverted().transform(ax.get_tightbbox(renderer).p0)[1]
            moved = draw_legend(ax, fontsize="small", loc="upper center", bbox_to_anchor=(0.5, bottom), borderaxespad=0.2,
                              ncol=min(n, 3))
            # the layout shrinks the panel to make room for the legend, which moves its axis label: place the
            # legend again under the label where it now is
            for _ in range(2):
                fig.canvas.draw()
                bottom = ax.transAxes.inverted().transform(ax.get_tightbbox(renderer, bbox_extra_artists=[]).p0)[1]
                moved.set_bbox_to_anchor((0.5, bottom), transform=ax.transAxes)


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
