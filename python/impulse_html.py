#!/usr/bin/python3
"""Write DIR/index.html: the reproduction's Markdown reports (tables, text)
with their figures inline, one self-contained page to open in a browser.

Usage: impulse_html.py DIR [TITLE]

Reads every *.md in DIR (results.md, impact_report.md, report.md, ... in
that order, then the others alphabetically), converts the subset of
Markdown the reports use (headings, pipe tables, paragraphs, lists, code
spans, emphasis, links and images) and appends any PNG figure of DIR or
DIR/figures that no report embeds. Only the standard library is needed.
The page is written through a temporary file and renamed.
"""
import glob
import html
import os
import re
import sys

FIRST = ("results.md", "impact_report.md", "report.md")


def inline(text):
    text = html.escape(text, quote=False)
    text = re.sub(r"!\[([^\]]*)\]\(([^)\s]+)\)",
                  lambda m: f'<figure><img src="{m.group(2)}" alt="{m.group(1)}"><figcaption>{m.group(1)}'
                            f'</figcaption></figure>', text)
    text = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)
    text = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"<em>\1</em>", text)
    return text


def cells(line):
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [c.strip() for c in line.split("|")]


def markdown(md):
    out, para, lines, i = [], [], md.splitlines(), 0

    def flush():
        if para:
            out.append("<p>" + inline(" ".join(para)) + "</p>")
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
            out.append(f"<h{level}>{inline(line[level:].strip())}</h{level}>")
        elif line.lstrip().startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|?[\s:|-]+\|?\s*$", lines[i + 1]):
            flush()
            head = cells(line)
            rows = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            out.append("<table><thead><tr>" + "".join(f"<th>{inline(c)}</th>" for c in head) + "</tr></thead><tbody>"
                       + "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>" for r in rows)
                       + "</tbody></table>")
            continue
        elif re.match(r"\s*[-*] ", line):
            flush()
            items = []
            while i < len(lines) and re.match(r"\s*[-*] ", lines[i]):
                items.append(re.sub(r"^\s*[-*] ", "", lines[i]))
                i += 1
            out.append("<ul>" + "".join(f"<li>{inline(t)}</li>" for t in items) + "</ul>")
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
nav a{margin-right:1em}"""


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
        body.append(f'<section id="{html.escape(os.path.basename(p))}">' + markdown(text) + "</section>")
    extra = [os.path.relpath(p, d) for p in sorted(glob.glob(os.path.join(d, "*.png")) +
                                                    glob.glob(os.path.join(d, "figures", "*.png")))]
    extra = [p for p in extra if p not in used]
    if extra:
        body.append("<section><h2>Other figures</h2>" + "".join(
            f'<figure><img src="{html.escape(p)}" alt="{html.escape(p)}"><figcaption>{html.escape(p)}</figcaption>'
            "</figure>" for p in extra) + "</section>")
    nav = "".join(f'<a href="{html.escape(os.path.basename(p))}">{html.escape(os.path.basename(p))}</a>' for p in mds)
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
