"""index.html of a report folder (python/impulse_html.py): the captions' TeX formulas are written in
Unicode (no raw $\\Vert ...$ left, no script or network needed to show them) and the figures are embedded
as data: URIs, so the page stands alone when copied out of its folder."""
import base64, os, re, shutil, struct, sys, tempfile, zlib

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(root, "python"))
import impulse_html  # noqa: E402

from checks import check, done  # noqa: E402


def tiny_png():
    """A 1x1 PNG, made here (no imaging library needed)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\x80")) + chunk(b"IEND", b""))


d = tempfile.mkdtemp(prefix="impulse_html_")
try:
    png = tiny_png()
    with open(os.path.join(d, "chnn_rel_err.png"), "wb") as f:
        f.write(png)
    os.mkdir(os.path.join(d, "figures"))
    with open(os.path.join(d, "figures", "extra.png"), "wb") as f:
        f.write(png)
    with open(os.path.join(d, "report.md"), "w", encoding="utf-8") as f:
        f.write("# Sweep report\n\nThe error $\\Vert\\hat z - z\\Vert$ and `$HOME` in code.\n\n"
                "![relative error $\\Vert\\hat z - z\\Vert / (\\Vert\\hat z\\Vert + \\Vert z\\Vert)$, "
                "$M_c J \\Delta v$, $0 \\leq \\mu \\leq 1$](chnn_rel_err.png)\n\n"
                "| model | $\\dot\\theta_1$ |\n|---|---|\n| chnn | 1 |\n")
    check(impulse_html.main(["impulse_html.py", d, "t"]) == 0, "impulse_html.py ran")
    page = open(os.path.join(d, "index.html"), encoding="utf-8").read()
    text = re.sub(r'src="[^"]*"', "", page)
    check("\\Vert" not in text and "\\hat" not in text and "\\leq" not in text and "\\dot" not in text,
          "no raw TeX left in the page")
    check("\u2016z\u0302 \u2212 z\u2016" in page, "||z^ - z|| written in Unicode")
    check("M<sub>c</sub> J \u0394v" in page and "0 \u2264 \u03bc \u2264 1" in page, "subscripts, Greek, relations")
    check("\u03b8\u0307<sub>1</sub>" in page, "a formula in a table header")
    check("<code>$HOME</code>" in page, "code spans keep their dollars")
    uris = re.findall(r'<img src="data:image/png;base64,([^"]+)"', page)
    check(len(uris) == 2 and all(base64.b64decode(u) == png for u in uris),
          "both figures embedded as data: URIs (%d found)" % len(uris))
    check('src="chnn_rel_err.png"' not in page and 'src="figures/extra.png"' not in page,
          "no image refers to a file beside the page")
finally:
    shutil.rmtree(d)
done()
