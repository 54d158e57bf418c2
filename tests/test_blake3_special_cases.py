"""BLAKE3 is a row of the algorithm table: code outside its own areas (its kernels,
``jitdigest/kernels/blake3/``, and its public package, ``jitdigest/blake3/``) reaches it through
the table's fields, not by name. This counts the mentions of its name left elsewhere."""
import pathlib
import re

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "jitdigest"
OWN = (PACKAGE / "kernels" / "blake3", PACKAGE / "blake3")
LIMIT = 10
NAME = re.compile("blake3", re.IGNORECASE)


def mentions():
    """{module path: mentions of the name} for the modules outside BLAKE3's own areas."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if any(area in path.parents for area in OWN):
            continue
        count = len(NAME.findall(path.read_text()))
        if count:
            found[str(path.relative_to(PACKAGE.parent))] = count
    return found


def test_blake3_mentioned_by_name_at_most_ten_times_outside_its_areas():
    found = mentions()
    table = "\n".join(f"{count:4d} {path}" for path, count in
                      sorted(found.items(), key=lambda item: -item[1]))
    assert sum(found.values()) <= LIMIT, f"{sum(found.values())} mentions:\n{table}"
