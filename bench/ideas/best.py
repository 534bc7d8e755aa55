"""The combination kept from bench/ideas/irregular.py, cues.py and no_session.py (issue 16,
tuning halves), and its robustness to turns stored without a session id:

    python bench/retrieval_turns.py DATASET --ideas bench/ideas/best.py

``best``: irregular verb/noun forms and photo words mapped before Snowball, the time cue
("when" questions / turns with a temporal expression) and the age cue ("how old" / turns
that state an age). ``no session id``: the turns are ingested without
``provenance.session_id``; ``fallback``: such a record's context is the records before it in
the same namespace and kind, when its kind is message or a colon comes early in its content
(a speaker label) (bench/ideas/no_session.py).

Measured on tokenizer 2 (main up to a60e4a9; bench/RESULTS.md and helper-17's notes have
the figures). Since 33539fd the default does this itself (state/lemmas.py,
state/answer_cues.py, the loose turn chain), so on later code these variants stack on it;
to reproduce the figures, run them on that tree::

    git archive a60e4a9 | tar -x -C /tmp/t2 && cd /tmp/t2
    PYTHONPATH=. python bench/retrieval_turns.py bench/data/conversations/DATASET.json
        --split tune --ideas /path/to/this/bench/ideas/best.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import retrieval_turns as rt
from retrieval_turns import Config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cues import AGE_CUE, IRR_PHOTO, TIME_CUE, context_patches, cue_patches  # noqa: E402
from no_session import fallback_nearest, ingest_without_session  # noqa: E402

BEST = (*IRR_PHOTO, *cue_patches([TIME_CUE, AGE_CUE]))
NO_SESSION = (rt, "ingest", ingest_without_session())
# Kind message, or a colon early in the content (the SQL gate of no_session.py).
FALLBACK = fallback_nearest(product_gate=True)


def ideas() -> list[Config]:
    return [
        Config.shipped("best", patches=BEST),
        Config.shipped("best, no session id", patches=(*BEST, NO_SESSION)),
        Config.shipped("best, no session id + fallback", patches=(*BEST, NO_SESSION, *FALLBACK)),
        Config.shipped(
            "best, no session id + fallback, context 2 x 0.3",
            patches=(*BEST, NO_SESSION, *FALLBACK, *context_patches(2, 0.3)),
        ),
        Config.shipped(
            "best, no session id + fallback, context 3 x 0.2",
            patches=(*BEST, NO_SESSION, *FALLBACK, *context_patches(3, 0.2)),
        ),
        Config.shipped("best + fallback (session ids kept)", patches=(*BEST, *FALLBACK)),
    ]
