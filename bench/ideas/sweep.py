"""Run --ideas configs on the three conversation datasets (one split) and on MADial-Bench.

usage: python bench/ideas/sweep.py [--split tune] [--madial] [--no-turns]
       [--only LABEL-SUBSTR ...] IDEAS.py ...
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import retrieval_madial as rm  # noqa: E402
import retrieval_turns as rt  # noqa: E402
from turns_dataset import load  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data" / "conversations"
SETS = [("CC", "companion-conversations"), ("L2", "locomo-style-2"), ("AC", "assistant-chats")]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("ideas", nargs="*")
    p.add_argument("--split", default="tune")
    p.add_argument("--madial", action="store_true")
    p.add_argument("--no-turns", action="store_true")
    p.add_argument("--only", nargs="*", default=[])
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    configs = [rt.BASELINE, rt.DEFAULT]
    for spec in args.ideas:
        configs += rt.load_ideas(spec)
    if args.only:
        configs = [
            c for c in configs if c in (rt.BASELINE, rt.DEFAULT) or any(o in c.label for o in args.only)
        ]
    t0 = time.time()
    rows: dict[str, dict[str, float]] = {c.label: {} for c in configs}
    results = {}
    if not args.no_turns:
        for short, name in SETS:
            ds = load(DATA / f"{name}.json")
            res = rt.run(ds, configs, split=args.split)
            results[short] = res
            for c in configs:
                for m in rt.HEADLINE:
                    rows[c.label][f"{short} {m}"] = res.mean(c.label, args.split, m)
    if args.madial:
        madial_split = {"tune": "even", "report": "odd"}.get(args.split, "all")
        for c in configs:
            if c.rank is not None:
                continue
            mc = rm.Config(c.label, c.bm25_weight, c.vector_weight, c.vector_mode, c.rrf_k)
            with rt.patched(c.patches):
                grid = rm.run_grid(rm.DEFAULT_DATA, [mc], c.settings, rm.SUMMARY_VARIANTS)
            for lang in rm.LANGS:
                cells = [grid[(lang, v, c.label, madial_split)] for v in rm.SUMMARY_VARIANTS]
                rows[c.label][f"md-{lang} MRR"] = sum(s.mean("MRR@10") for s in cells) / len(cells)
                rows[c.label][f"md-{lang} R2000c"] = sum(s.mean("R@2000c") for s in cells) / len(cells)
    cols = list(dict.fromkeys(k for r in rows.values() for k in r))
    turn_cols = [k for k in cols if not k.startswith("md-")]
    print(f"split {args.split}; {time.time() - t0:.0f} s")
    head = ["config", *cols]
    if turn_cols:
        head += ["sum R@10", "sum R@2000c"]
    print("| " + " | ".join(head) + " |")
    print("| --- " + "| ---: " * (len(head) - 1) + "|")
    for c in configs:
        r = rows[c.label]
        cells = [f"{r[k]:.3f}" if k in r else "" for k in cols]
        if turn_cols:
            cells += [
                f"{sum(r[k] for k in turn_cols if k.endswith('R@10')):.3f}",
                f"{sum(r[k] for k in turn_cols if k.endswith('2000c')):.3f}",
            ]
        print(f"| {c.label} | " + " | ".join(cells) + " |")
    if args.json:
        import json

        args.json.write_text(json.dumps({s: rt.per_question_json(r) for s, r in results.items()}))


if __name__ == "__main__":
    sys.modules.setdefault("sweep", sys.modules[__name__])
    main()
