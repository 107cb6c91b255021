"""ctest: the shared library exports only imp_ names declared in the public
headers (include/impulse/*.h), and its soname carries the ABI version."""
import re, subprocess, sys, glob, os

lib, include = sys.argv[1], sys.argv[2]
declared = set()
for h in glob.glob(os.path.join(include, "impulse", "*.h")):
    text = open(h).read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    declared |= set(re.findall(r"\b(imp_\w+)\s*[(;]", text))
out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
exported = [line.split()[-1] for line in out.splitlines() if line.split() and line.split()[-2:-1] != ["A"]]
bad = [s for s in exported if not s.startswith("imp_") or s not in declared]
soname = subprocess.run(["objdump", "-p", lib], check=True, capture_output=True, text=True).stdout
m = re.search(r"SONAME\s+(\S+)", soname)
print(f"{len(exported)} exported symbols, {len(declared)} imp_ names in the headers, soname {m and m.group(1)}")
if bad:
    print("exported but not declared in a public header:", " ".join(sorted(bad)))
if not m or not re.fullmatch(r"libimpulse\.so\.\d+", m.group(1)):
    print("soname is not versioned")
sys.exit(1 if bad or not m or len(exported) < 100 else 0)
