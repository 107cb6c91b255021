#!/usr/bin/python3
"""Write DIR/index.html: the reproduction's Markdown reports (tables, text)
with their figures inline, one self-contained page to open in a browser.

Usage: impulse_html.py DIR [TITLE]

Reads every *.md in DIR (results.md, impact_report.md, report.md, ... in
that order, then the others alphabetically), converts the subset of
Markdown the reports use (headings, pipe tables, paragraphs, lists, code
spans, emphasis, links and images) and appends any PNG figure of DIR or
DIR/figures that no report embeds. The figures are embedded in the page as
data: URIs and the captions' TeX formulas ($\\Vert\\hat z - z\\Vert$) are
written in Unicode, so the page needs neither its folder nor a network to
show. Only the standard library is needed. The page is written through a
temporary file and renamed.
"""
import base64
import glob
import html
import os
import re
import sys

FIRST = ("results.md", "impact_report.md", "report.md")

# TeX commands of the reports' captions (matplotlib's mathtext in the figures) as Unicode, so the page
# shows the formulas without a network or a script at view time
TEX_SYMBOLS = {
    "Vert": "\u2016", "|": "\u2016", "leq": "\u2264", "le": "\u2264", "geq": "\u2265", "ge": "\u2265",
    "neq": "\u2260", "approx": "\u2248", "pm": "\u00b1", "times": "\u00d7", "cdot": "\u00b7", "infty": "\u221e",
    "partial": "\u2202", "nabla": "\u2207", "sum": "\u2211", "int": "\u222b", "to": "\u2192", "in": "\u2208",
    "sqrt": "\u221a", "ldots": "\u2026", "dots": "\u2026", "quad": "\u2003", ",": "\u2009", " ": " ",
    "alpha": "\u03b1", "beta": "\u03b2", "gamma": "\u03b3", "delta": "\u03b4", "epsilon": "\u03f5",
    "varepsilon": "\u03b5", "zeta": "\u03b6", "eta": "\u03b7", "theta": "\u03b8", "vartheta": "\u03d1",
    "kappa": "\u03ba", "lambda": "\u03bb", "mu": "\u03bc", "nu": "\u03bd", "xi": "\u03be", "pi": "\u03c0",
    "rho": "\u03c1", "sigma": "\u03c3", "tau": "\u03c4", "phi": "\u03c6", "varphi": "\u03c6", "chi": "\u03c7",
    "psi": "\u03c8", "omega": "\u03c9", "Gamma": "\u0393", "Delta": "\u0394", "Theta": "\u0398",
    "Lambda": "\u039b", "Xi": "\u039e", "Pi": "\u03a0", "Sigma": "\u03a3", "Phi": "\u03a6", "Psi": "\u03a8",
    "Omega": "\u03a9",
}
# accents: a combining character after the argument's first letter
TEX_ACCENTS = {"hat": "\u0302", "dot": "\u0307", "ddot": "\u0308", "tilde": "\u0303", "bar": "\u0304",
               "vec": "\u20d7"}
TEX_SPACED = {"leq", "le", "geq", "ge", "neq", "approx", "pm", "times", "cdot", "to", "in", "quad"}
TEX_TOKEN = re.compile(r"\\([A-Za-z]+|.)|([_^])|(\{)|(\})|([^\\_^{}]+)")


def tex_group(tokens, i):
    """The argument starting at tokens[i] (a {group}, a command or one character): (HTML, next index)."""
    if i >= len(tokens):
        return "", i
    cmd, script, opening, closing, text = tokens[i]
    if opening:
        depth, j = 1, i + 1
        while j < len(tokens) and depth:
            depth += 1 if tokens[j][2] else -1 if tokens[j][3] else 0
            j += 1
        return tex_html(tokens[i + 1:j - 1]), j
    if text:  # one character (TeX skips the spaces before an argument); the rest stays for the caller
        text = text.lstrip()
        if not text:
            return tex_group(tokens, i + 1)
        rest = text[1:]
        if rest:
            tokens[i] = (None, None, None, None, rest)
            return html.escape(text[0], quote=False), i
        return html.escape(text[0], quote=False), i + 1
    return tex_html(tokens[i:i + 1]), i + 1


def tex_html(tokens):
    out, i = [], 0
    while i < len(tokens):
        cmd, script, opening, closing, text = tokens[i]
        if cmd is not None and cmd in TEX_ACCENTS:
            arg, i = tex_group(tokens, i + 1)
            out.append(arg + TEX_ACCENTS[cmd] if arg and not arg.startswith("&") else arg)
            continue
        if cmd == "frac":
            num, i = tex_group(tokens, i + 1)
            den, i = tex_group(tokens, i)
            out.append(f"({num})/({den})")
            continue
        if cmd in ("mathrm", "text", "mathit", "mathbf", "operatorname", "left", "right"):
            i += 1
            continue
        if cmd is not None:
            out.append(TEX_SYMBOLS.get(cmd, html.escape(cmd, quote=False)))
        elif script:
            arg, i = tex_group(tokens, i + 1)
            tag = "sub" if script == "_" else "sup"
            out.append(f"<{tag}>{arg}</{tag}>")
            continue
        elif text:
            out.append(html.escape(text, quote=False).replace("-", "\u2212"))
        i += 1
    return "".join(out)


def tex(formula):
    """A TeX formula (the subset in the reports: Greek letters, relations, accents, sub- and superscripts,
    fractions) as HTML with Unicode characters."""
    tokens = [m.groups() for m in TEX_TOKEN.finditer(formula)]
    # as in TeX, the spaces that end a command word before its operand are not printed ("\\Delta v" is one
    # symbol); relations and operators keep theirs
    for k in range(1, len(tokens)):
        prev, text = tokens[k - 1][0], tokens[k][4]
        if text and prev and prev[0].isalpha() and prev not in TEX_SPACED and text.lstrip()[:1].isalnum():
            tokens[k] = (None, None, None, None, text.lstrip())
    tokens = [t for t in tokens if t[4] != ""]
    return '<span class="math">' + tex_html(tokens) + "</span>"


def math_text(text):
    """Plain text with $...$ formulas as Unicode (for alt texts and titles: no markup)."""
    return re.sub(r"\$([^$]+)\$", lambda m: re.sub(r"<[^>]+>", "", tex(m.group(1))), text)


def data_uri(path):
    """The image at path as a data: URI (the page stands alone), or None when it cannot be read."""
    kind = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
            ".gif": "image/gif"}.get(os.path.splitext(path)[1].lower())
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    return f"data:{kind or 'application/octet-stream'};base64," + base64.b64encode(data).decode("ascii")


def figure(src, caption, base):
    """A <figure>: the image embedded when it is a local file of the report's folder."""
    local = not re.match(r"^[a-z]+:", src) and not src.startswith("/")
    uri = data_uri(os.path.join(base, src)) if local and base is not None else None
    alt = html.escape(math_text(caption))
    cap = inline_text(caption)
    return f'<figure><img src="{uri or html.escape(src)}" alt="{alt}"><figcaption>{cap}</figcaption></figure>'


def inline_text(text):
    """Markdown inline markup without images: code spans (kept as written), $formulas$, links, emphasis."""
    parts = re.split(r"(`[^`]+`)", text)
    out = []
    for k, part in enumerate(parts):
        if k % 2:
            out.append("<code>" + html.escape(part[1:-1], quote=False) + "</code>")
            continue
        pieces = re.split(r"(\$[^$]+\$)", part)
        for j, piece in enumerate(pieces):
            if j % 2:
                out.append(tex(piece[1:-1]))
                continue
            piece = html.escape(piece, quote=False)
            piece = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', piece)
            piece = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", piece)
            piece = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"<em>\1</em>", piece)
            out.append(piece)
    return "".join(out)


def inline(text, base=None):
    """Markdown inline markup; images become figures, embedded from the folder `base`."""
    parts = re.split(r"(!\[[^\]]*\]\([^)\s]+\))", text)
    out = []
    for k, part in enumerate(parts):
        if k % 2:
            m = re.match(r"!\[([^\]]*)\]\(([^)\s]+)\)", part)
            out.append(figure(m.group(2), m.group(1), base))
        else:
            out.append(inline_text(part))
    return "".join(out)


def cells(line):
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [c.strip() for c in line.split("|")]


def markdown(md, base=None):
    out, para, lines, i = [], [], md.splitlines(), 0

    def flush():
        if para:
            out.append("<p>" + inline(" ".join(para), base) + "</p>")
            para.clear()

    while i < len(lines):
        line = lines[i]
        if not line.strip():
            flush()
        elif line.startswith("```"):
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append("<pre>" + html.escape("\n".join(lines[i + 1:j])) + "</pre>")
            i = j
        elif re.match(r"#{1,6} ", line):
            flush()
            level = len(line) - len(line.lstrip("#"))
            out.append(f"<h{level}>{inline(line[level:].strip(), base)}</h{level}>")
        elif line.lstrip().startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|?[\s:|-]+\|?\s*$", lines[i + 1]):
            flush()
            head = cells(line)
            rows = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            out.append("<table><thead><tr>" + "".join(f"<th>{inline(c, base)}</th>" for c in head) + "</tr></thead><tbody>"
                       + "".join("<tr>" + "".join(f"<td>{inline(c, base)}</td>" for c in r) + "</tr>" for r in rows)
                       + "</tbody></table>")
            continue
        elif re.match(r"\s*[-*] ", line):
            flush()
            items = []
            while i < len(lines) and re.match(r"\s*[-*] ", lines[i]):
                items.append(re.sub(r"^\s*[-*] ", "", lines[i]))
                i += 1
            out.append("<ul>" + "".join(f"<li>{inline(t, base)}</li>" for t in items) + "</ul>")
            continue
        else:
            para.append(line.strip())
        i += 1
    flush()
    return "\n".join(out)


STYLE = """body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;line-height:1.45;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:0.9em}th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:left}
th{background:#f3f3f3}code,pre{background:#f6f6f6;padding:0 0.2em}pre{padding:0.6em;overflow-x:auto}
figure{margin:1.5em 0}img{max-width:100%;border:1px solid #eee}figcaption{font-size:0.9em;color:#555}
nav a{margin-right:1em}.math{font-family:"DejaVu Serif",Cambria,"Times New Roman",serif;white-space:nowrap}
.math sub,.math sup{font-size:0.75em}"""


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: impulse_html.py DIR [TITLE]", file=sys.stderr)
        return 2
    d = argv[1]
    title = argv[2] if len(argv) == 3 else os.path.basename(os.path.abspath(d))
    mds = [os.path.join(d, f) for f in FIRST if os.path.exists(os.path.join(d, f))]
    mds += sorted(p for p in glob.glob(os.path.join(d, "*.md")) if p not in mds)
    body, used = [], set()
    for p in mds:
        with open(p, encoding="utf-8") as f:
            text = f.read()
        used |= set(re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text))
        body.append(f'<section id="{html.escape(os.path.basename(p))}">' + markdown(text, d) + "</section>")
    extra = [os.path.relpath(p, d) for p in sorted(glob.glob(os.path.join(d, "*.png")) +
                                                    glob.glob(os.path.join(d, "figures", "*.png")))]
    extra = [p for p in extra if p not in used]
    if extra:
        body.append("<section><h2>Other figures</h2>" + "".join(figure(p, p, d) for p in extra) + "</section>")
    nav = "".join(f'<a href="#{html.escape(os.path.basename(p))}">{html.escape(os.path.basename(p))}</a>' for p in mds)
    page = (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body><nav>Markdown: {nav}</nav>\n" + "\n".join(body) + "\n</body></html>\n")
    out = os.path.join(d, "index.html")
    tmp = f"{out}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(page)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, ValueError) as e:
        print(f"impulse_html: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(2)
