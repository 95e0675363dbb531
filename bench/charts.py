#!/usr/bin/env python3
"""Renders the recorded benchmark results (bench/results/) as SVG bar charts (bench/charts/), embedded in BENCHMARKS.md.

    bench/charts.py            every chart of CHARTS below, from the results committed under bench/results/<date>/<run>/

Each chart is one table of BENCHMARKS.md: the library's bars (dark), their floors (grey) and peers (light), each with
its error (JMH's 99.9 % interval) as a whisker, and each of the library's bars marked with its ratio to the bar it is
measured against. Python 3 standard library only; the SVG is plain text, so a change to a result shows in a diff.
"""
import csv
import html
import json
import os
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(ROOT, "results")
OUT = os.path.join(ROOT, "charts")

COLOURS = {"library": "#1f4e79", "floor": "#9e9e9e", "peer": "#c6d9ec", "twin": "#e0b35a"}


def jmh(file, database, threads=None):
    """{method name: (score, error)} of one JMH JSON file, for one database parameter."""
    with open(os.path.join(RESULTS, file)) as f:
        runs = json.load(f)
    found = {}
    for run in runs:
        params = run.get("params") or {}
        if database is not None and params.get("database") != database:
            continue
        if threads is not None and run.get("threads") != threads:
            continue
        name = run["benchmark"].rsplit(".", 1)[1]
        found[name] = (run["primaryMetric"]["score"], run["primaryMetric"]["scoreError"])
    return found


def table(file):
    """{label: (value, error)} of a CSV of label,value,error rows (results that are not JMH's: the HTTP driver's)."""
    with open(os.path.join(RESULTS, file)) as f:
        return {row["label"]: (float(row["value"]), float(row["error"] or 0)) for row in csv.DictReader(f)}


# Each chart: a title, its unit and direction, and its bars: (label, role, key in the source, the label of the bar its
# ratio is to or None). Sources: ("jmh", file, database[, threads]) or ("csv", file).
CHARTS = [
    {
        "name": "claims-callers-transaction-{db}",
        "title": "In the caller's JTA transaction, one thread ({db}): µs per call, lower is better",
        "unit": "µs", "higher_is_better": False,
        "source": ("jmh", "2026-11-26/claims/claims.json", "{db}"),
        "bars": [
            ("business transaction alone", "floor", "businessTransactionAlone", None),
            ("floor: business + 1 raw INSERT (3 columns)", "floor", "floorBusinessAndOneInsertInTheCallersTransaction", None),
            ("floor: optimistic's own 2 statements", "floor", "floorLibrarysStatementsInAJtaTransaction", None),
            ("optimistic", "library", "optimisticInTheCallersTransaction",
             ("floor: business + 1 raw INSERT (3 columns)", "floor: optimistic's own 2 statements")),
            ("floor: claim + business + answer (3 columns)", "floor", "floorSameStatementsInTheCallersTransaction", None),
            ("floor: atomic's own 3 statements", "floor", "floorLibrarysAtomicStatementsInAJtaTransaction", None),
            ("atomic", "library", "atomicInTheCallersTransaction",
             ("floor: claim + business + answer (3 columns)", "floor: atomic's own 3 statements")),
        ],
    },
    {
        "name": "claims-own-transaction-{db}",
        "title": "No caller transaction, one thread ({db}): µs per call, lower is better",
        "unit": "µs", "higher_is_better": False,
        "source": ("jmh", "2026-11-26/claims/claims.json", "{db}"),
        "bars": [
            ("floor: business + 1 INSERT, raw JDBC", "floor", "floorBusinessAndOneInsertOneTransaction", None),
            ("optimistic", "library", "optimisticInTheLibrarysTransaction", "floor: business + 1 INSERT, raw JDBC"),
            ("floor: claim + business + answer, raw JDBC", "floor", "floorSameStatementsOneTransaction", None),
            ("atomic", "library", "atomicInTheLibrarysTransaction", "floor: claim + business + answer, raw JDBC"),
            ("Camel JPA add + business + confirm", "peer", "camelJpaAddBusinessConfirm", None),
        ],
    },
    {
        "name": "claims-8-threads-{db}",
        "title": "8 threads, distinct keys ({db}): calls per second, higher is better",
        "unit": "ops/s", "higher_is_better": True,
        "source": ("jmh", "2026-11-26/claims/claims-8.json", "{db}"),
        "bars": [
            ("floor: optimistic's 2 statements, raw", "floor", "floorLibrarysStatementsOneTransaction", None),
            ("floor: the same in JTA", "floor", "floorLibrarysStatementsInAJtaTransaction", None),
            ("optimistic", "library", "optimisticInTheLibrarysTransaction",
             ("floor: optimistic's 2 statements, raw", "floor: the same in JTA")),
            ("optimistic, an Infinispan local cache in front", "library", "optimisticWithAnInfinispanLocalCacheInTheLibrarysTransaction",
             ("floor: optimistic's 2 statements, raw", "floor: the same in JTA")),
            ("floor: atomic's 3 statements, raw", "floor", "floorLibrarysAtomicStatementsOneTransaction", None),
            ("floor: the same in JTA ", "floor", "floorLibrarysAtomicStatementsInAJtaTransaction", None),
            ("atomic", "library", "atomicInTheLibrarysTransaction",
             ("floor: atomic's 3 statements, raw", "floor: the same in JTA ")),
            ("atomic, the local cache in front", "library", "atomicWithTheLocalCacheInTheLibrarysTransaction",
             ("floor: atomic's 3 statements, raw", "floor: the same in JTA ")),
        ],
    },
    {
        "name": "replay",
        "title": "A duplicate of a finished key, no database: µs per duplicate, lower is better",
        "unit": "µs", "higher_is_better": False, "digits": 2,
        "source": ("jmh", "2026-11-26/replay/replay.json", None),
        "bars": [
            ("floor: SHA-256 of 1 KiB + a local get", "floor", "floorSha256AndLocalGet", None),
            ("the library: fingerprint, cache hit, record", "library", "replayThroughTheEngine", "floor: SHA-256 of 1 KiB + a local get"),
            ("floor: the same with an Infinispan get", "floor", "floorSha256AndInfinispanLocalGet", None),
            ("the library, an Infinispan local cache", "library", "replayThroughAnInfinispanLocalCache", "floor: the same with an Infinispan get"),
            ("Camel: the same fingerprint + add", "peer", "camelInfinispanDuplicateWithFingerprint", None),
            ("Camel: add of a known key, nothing else", "peer", "camelInfinispanDuplicate", None),
        ],
    },
    {
        "name": "http-{workload}-{server_db}",
        "title": "HTTP, the example on Payara Micro ({server_db}), {workload}: requests per second, higher is better",
        "unit": "req/s", "higher_is_better": True,
        "source": ("csv", "{http_run}/http-{server_db}-{workload}.csv"),
        "bars": [
            ("unprotected twin", "floor", "unprotected", None),
            ("by hand (no library)", "twin", "by-hand", "unprotected twin"),
            ("optimistic", "library", "optimistic", "by hand (no library)"),
            ("atomic", "library", "protected", "by hand (no library)"),
        ],
    },
]

# The HTTP run each server database's charts are drawn from (a folder under bench/results/).
HTTP_RUNS = {"h2": "2026-11-26/http-turns", "postgresql": "2026-11-26/http-postgresql-before-read"}

EXPAND = {
    "db": ["postgresql", "mariadb"],
    "server_db": ["h2", "postgresql"],
    "workload": ["unique", "retries"],
}


def expansions(chart):
    keys = [k for k in EXPAND if "{" + k + "}" in chart["name"]]
    combos = [{}]
    for k in keys:
        combos = [dict(c, **{k: v}) for c in combos for v in EXPAND[k]]
    return [dict(c, http_run=HTTP_RUNS[c["server_db"]]) if "server_db" in c else c for c in combos]


def short(label):
    """How a ratio names the bar it is to: a floor by what sets it apart ("floor (JTA)"), another bar by its label."""
    if label.strip() in FLOOR_NAMES:
        return "floor " + FLOOR_NAMES[label.strip()]
    return label.split(":")[0].split(" (")[0]


FLOOR_NAMES = {
    "floor: business + 1 raw INSERT (3 columns)": "(3 col.)",
    "floor: optimistic's own 2 statements": "(own)",
    "floor: claim + business + answer (3 columns)": "(3 col.)",
    "floor: atomic's own 3 statements": "(own)",
    "floor: optimistic's 2 statements, raw": "(raw)",
    "floor: the same in JTA": "(JTA)",
    "floor: atomic's 3 statements, raw": "(raw)",
}


def render(chart, values):
    bars = [(label, role, values[key], ratio_to) for label, role, key, ratio_to in chart["bars"] if key in values]
    if not bars:
        return None
    width, left, right, row, top = 1200, 330, 420, 34, 48
    height = top + row * len(bars) + 30
    biggest = max(v + e for _, _, (v, e), _ in bars) or 1
    scale = (width - left - right) / biggest
    by_label = {label: v for label, _, (v, _), _ in bars}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="13">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="24" font-size="15" font-weight="bold">{html.escape(chart["title"])}</text>']
    for i, (label, role, (value, error), ratio_to) in enumerate(bars):
        y = top + i * row
        w = max(1, value * scale)
        out.append(f'<text x="{left - 8}" y="{y + 17}" text-anchor="end">{html.escape(label)}</text>')
        out.append(f'<rect x="{left}" y="{y + 4}" width="{w:.1f}" height="20" fill="{COLOURS[role]}"/>')
        if error > 0:
            lo, hi = left + max(0, value - error) * scale, left + (value + error) * scale
            out.append(f'<line x1="{lo:.1f}" y1="{y + 14}" x2="{hi:.1f}" y2="{y + 14}" stroke="black"/>')
            out.append(f'<line x1="{hi:.1f}" y1="{y + 9}" x2="{hi:.1f}" y2="{y + 19}" stroke="black"/>')
        text = f"{value:,.{chart.get('digits', 0)}f} {chart['unit']}"
        # A bar may be measured against more than one: its ratio to each, in the order given ("x the first, x the
        # second"), named by the other bar's label before its colon.
        targets = [t for t in ((ratio_to,) if isinstance(ratio_to, str) else ratio_to or ()) if by_label.get(t)]
        if targets:
            text += "  (" + ", ".join(f"{value / by_label[t]:.2f}x {short(t)}" for t in targets) + ")"
        end = left + (value + error) * scale + 6
        out.append(f'<text x="{end:.1f}" y="{y + 18}" font-weight="{"bold" if role == "library" else "normal"}">{html.escape(text)}</text>')
    legend = "dark: the library; grey: its floor (the same statements without it); light: a peer; amber: written by hand"
    out.append(f'<text x="10" y="{height - 10}" fill="#555" font-size="11">{legend}; whiskers: the error</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    os.makedirs(OUT, exist_ok=True)
    written = []
    for chart in CHARTS:
        for combo in expansions(chart):
            source = tuple(s.format(**combo) if isinstance(s, str) else s for s in chart["source"])
            path = os.path.join(RESULTS, source[1])
            if not os.path.exists(path):
                continue
            values = jmh(*source[1:]) if source[0] == "jmh" else table(source[1])
            concrete = dict(chart, title=chart["title"].format(**combo))
            svg = render(concrete, values)
            if svg is None:
                continue
            name = chart["name"].format(**combo) + ".svg"
            with open(os.path.join(OUT, name), "w") as f:
                f.write(svg)
            written.append(name)
    print("\n".join(f"bench/charts/{n}" for n in written) or "no results to draw", file=sys.stderr)


if __name__ == "__main__":
    main()
