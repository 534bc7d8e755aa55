"""bench/turns_dataset.py's three loaders and bench/retrieval_turns.py's metrics, on tiny
inline datasets (the benchmark itself is run by hand: bench/README.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import retrieval_turns as rt  # noqa: E402
from turns_dataset import DatasetError, dia_key, load, locomo_date, longmemeval_date, parse  # noqa: E402


def write(tmp_path: Path, data: object, name: str = "data.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def canonical(**question: object) -> dict:
    return {
        "name": "tiny",
        "conversations": [
            {
                "id": "ana-ben",
                "sessions": [
                    {
                        "id": "S1",
                        "date": "2023-05-08T13:56",
                        "turns": [
                            {"id": "t1", "speaker": "Ana", "text": "kite kite"},
                            {
                                "id": "t2",
                                "speaker": "Ben",
                                "text": "I saw a kite over the hill yesterday afternoon",
                                "image_caption": "a red kite above green hills",
                            },
                            {"id": "t3", "speaker": "Ana", "text": "The bakery opens at seven"},
                        ],
                    },
                ],
            },
            {
                "id": "cy-dee",
                "turns": [
                    {
                        "id": "u1",
                        "session": "A",
                        "date": "2023-06-01",
                        "speaker": "Cy",
                        "text": "My sister plays the cello",
                    },
                    {"id": "u2", "session": "B", "speaker": "Dee", "text": "Our kite got stuck in a tree"},
                ],
            },
        ],
        "questions": [
            {
                "id": "q1",
                "conversation": "ana-ben",
                "question": "Who has a kite?",
                "gold": ["t2"],
                "category": "photo",
                **question,
            },
            {
                "id": "q2",
                "conversation": "cy-dee",
                "question": "What instrument does the sister play?",
                "gold": ["u1"],
            },
        ],
    }


def test_canonical_sessions_and_flat_turns(tmp_path: Path) -> None:
    dataset = load(write(tmp_path, canonical(date="2023-06-02")))
    assert dataset.shape == "canonical" and dataset.name == "tiny"
    first, second = dataset.conversations
    assert (first.split, second.split) == ("tune", "report")  # by position when not given
    turn = first.turns[1]
    assert (turn.id, turn.session, turn.date, turn.speaker) == ("t2", "S1", "2023-05-08T13:56", "Ben")
    assert turn.image_caption == "a red kite above green hills"
    assert [(t.session, t.date) for t in second.turns] == [("A", "2023-06-01"), ("B", None)]
    q1, q2 = dataset.questions
    assert (q1.gold, q1.category, q1.date) == (("t2",), "photo", "2023-06-02")
    assert q2.category is None and dataset.split_of(q2) == "report"
    assert rt.memory_text(turn) == (
        "Ben: I saw a kite over the hill yesterday afternoon [shares a photo: a red kite above green hills]"
    )


def test_locomo_shape(tmp_path: Path) -> None:
    data = [
        {
            "sample_id": "conv-1",
            "conversation": {
                "speaker_a": "Caroline",
                "speaker_b": "Melanie",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel!"},
                    {
                        "speaker": "Melanie",
                        "dia_id": "D1:2",
                        "text": "Look at this",
                        "img_url": ["x"],
                        "blip_caption": "a photo of a sunset over a lake",
                    },
                ],
                "session_2_date_time": "12:05 am on 3 June, 2023",
                "session_2": [
                    {"speaker": "Caroline", "dia_id": "D2:1", "text": "I went to a support group."}
                ],
            },
            "qa": [
                {
                    "question": "What did Melanie share?",
                    "answer": "a sunset",
                    "evidence": ["D1:2"],
                    "category": 4,
                },
                {"question": "When?", "answer": "x", "evidence": ["D1:1; D2:1", "D9:9"], "category": 2},
                {"question": "No evidence", "answer": "x", "evidence": [], "category": 5},
                {"question": "Missing turn", "answer": "x", "evidence": ["D7:1"], "category": 1},
                {"question": "Padded", "answer": "x", "evidence": ["D2:01", "d1:2"], "category": 3},
            ],
        }
    ]
    dataset = load(write(tmp_path, data))
    assert dataset.shape == "locomo"
    conv = dataset.conversations[0]
    assert conv.speakers == ("Caroline", "Melanie")
    assert [(t.id, t.session, t.date) for t in conv.turns] == [
        ("D1:1", "session_1", "2023-05-08T13:56"),
        ("D1:2", "session_1", "2023-05-08T13:56"),
        ("D2:1", "session_2", "2023-06-03T00:05"),
    ]
    assert conv.turns[1].image_caption == "a photo of a sunset over a lake"
    assert [(q.gold, q.category) for q in dataset.questions] == [
        (("D1:2",), "cat4"),
        (("D1:1", "D2:1"), "cat2"),
        (("D2:1", "D1:2"), "cat3"),  # LoCoMo's evidence sometimes pads or lowercases an id
    ]
    assert dataset.skipped == {
        "questions without evidence": 1,
        "questions whose evidence names no turn": 1,
        "evidence ids naming no turn (dropped)": 2,
        "evidence ids written otherwise (D1:03 for D1:3; kept)": 2,
    }
    assert dia_key("D30:05") == "D30:5" and dia_key("session_1:3") == "session_1:3"
    assert locomo_date("10:37 am on 27 June, 2023") == "2023-06-27T10:37"
    assert locomo_date("12:00 pm on 1 Jan, 2024") == "2024-01-01T12:00"


def test_longmemeval_shape(tmp_path: Path) -> None:
    data = [
        {
            "question_id": "e47becba",
            "question_type": "single-session-user",
            "question": "What degree did I graduate with?",
            "answer": "Business Administration",
            "question_date": "2023/05/30 (Tue) 23:40",
            "haystack_session_ids": ["sharegpt_1", "answer_1"],
            "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/20 (Sat) 02:57"],
            "haystack_sessions": [
                [{"role": "user", "content": "Tell me a joke"}, {"role": "assistant", "content": "No."}],
                [
                    {"role": "user", "content": "I graduated in Business Administration", "has_answer": True},
                    {"role": "assistant", "content": "Congratulations!"},
                ],
            ],
            "answer_session_ids": ["answer_1"],
        },
        {
            "question_id": "x_abs",
            "question_type": "temporal-reasoning",
            "question": "Unanswerable?",
            "question_date": "2023/05/30 (Tue) 23:40",
            "haystack_session_ids": ["s"],
            "haystack_dates": ["2023/05/01 (Mon) 10:00"],
            "haystack_sessions": [[{"role": "user", "content": "hello"}]],
            "answer_session_ids": [],
        },
    ]
    dataset = load(write(tmp_path, data))
    assert dataset.shape == "longmemeval"
    assert [c.id for c in dataset.conversations] == ["e47becba", "x_abs"]
    (question,) = dataset.questions
    assert question.gold == ("answer_1:0",) and question.category == "single-session-user"
    assert question.date == "2023-05-30T23:40"
    turn = dataset.conversations[0].turns[2]
    assert (turn.id, turn.session, turn.speaker, turn.date) == (
        "answer_1:0",
        "answer_1",
        "user",
        "2023-05-20T02:57",
    )
    assert dataset.skipped == {"questions without has_answer turns": 1}
    assert longmemeval_date("2023/01/02") == "2023-01-02"


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda d: d["conversations"][0]["sessions"][0]["turns"][1].pop("text"),
            "conversations[0].sessions[0].turns[1].text: missing",
        ),
        (
            lambda d: d["conversations"][0]["sessions"][0].update(date="8 May 2023"),
            "conversations[0].sessions[0].date: not an ISO 8601 date",
        ),
        (
            lambda d: d["questions"][0].update(gold=["nope"]),
            "questions[0].gold: no turn 'nope' in conversation 'ana-ben'",
        ),
        (lambda d: d["questions"][1].update(conversation="zz"), "questions[1].conversation: no conversation"),
        (
            lambda d: d["conversations"][1]["turns"][0].update(speaker=["Cy"]),
            "conversations[1].turns[0].speaker: expected a string, got list",
        ),
    ],
)
def test_malformed_canonical_names_file_and_field(tmp_path: Path, mutate, message: str) -> None:
    data = canonical()
    mutate(data)
    path = write(tmp_path, data, "bad.json")
    with pytest.raises(DatasetError) as caught:
        load(path)
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)


def test_unreadable_inputs(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"conversations": [', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"broken\.json: not JSON"):
        load(broken)
    with pytest.raises(DatasetError, match="unrecognised dataset shape"):
        parse({"dialogues": []}, "x.json")
    with pytest.raises(DatasetError, match=r"session_1_date_time: not a LoCoMo date"):
        parse(
            [
                {
                    "sample_id": "s",
                    "conversation": {"session_1_date_time": "yesterday", "session_1": []},
                    "qa": [],
                }
            ],
            "l.json",
        )
    with pytest.raises(DatasetError, match="no such file"):
        load(tmp_path / "absent.json")


def test_cli_reports_a_bad_file_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    data = canonical()
    del data["questions"][0]["question"]
    assert rt.main([str(write(tmp_path, data, "bad.json")), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "questions[0].question: missing" in err
    assert "Traceback" not in err


def test_end_to_end_metrics_by_hand(tmp_path: Path) -> None:
    """q1's gold turn t2 comes second for the Porter baseline ("kite kite" outscores it):
    MRR 0.5, recall 1. The fixed ranking puts a 1,990-character turn first, so the gold turn
    falls outside 2,000 characters: R@2000c 0 while R@10 is 1."""
    data = canonical()
    data["conversations"][0]["sessions"][0]["turns"].append(
        {"id": "t4", "speaker": "Ana", "text": "x" * (1990 - len("Ana: "))}
    )
    dataset = load(write(tmp_path, data))

    def fixed(bench: rt.Bench, question, limit: int) -> list[rt.TurnKey]:
        order = {"ana-ben": ["t4", "t2", "t1"], "cy-dee": ["u2", "u1"]}[question.conversation]
        return [(question.conversation, t) for t in order][:limit]

    configs = [rt.BASELINE, rt.DEFAULT, rt.Config("fixed", rank=fixed)]
    result = rt.run(dataset, configs, split="tune")
    assert result.splits == ["tune"] and [q.id for q in result.questions()] == ["q1"]
    base = result.per_question[rt.BASELINE.label]["q1"]
    assert base == {"R@5": 1.0, "R@10": 1.0, "hit@10": 1.0, "MRR@10": 0.5, "R@2000c": 1.0}
    assert result.ranked[rt.BASELINE.label]["q1"] == [("ana-ben", "t1"), ("ana-ben", "t2")]
    assert result.per_question["fixed"]["q1"] == {
        "R@5": 1.0,
        "R@10": 1.0,
        "hit@10": 1.0,
        "MRR@10": 0.5,
        "R@2000c": 0.0,
    }
    assert result.count("fixed", "tune", "photo") == 1
    assert result.mean(rt.DEFAULT.label, "tune", "hit@10") == 1.0  # the product finds it too

    both = rt.run(dataset, [rt.Config("fixed", rank=fixed)], split="all")
    assert both.per_question["fixed"]["q2"]["MRR@10"] == 0.5  # u1 second
    assert both.mean("fixed", "report", "MRR@10") == 0.5 and both.count("fixed", "all") == 2
    section = rt.section_markdown(both, "python bench/retrieval_turns.py x.json")
    assert section.startswith(rt.SECTION_HEADING + "\n") and "| fixed | 2 |" in section


def test_relative_difference_and_baseline_query() -> None:
    assert rt.relative(0.5203, 0.5) == "+4.1 %"
    assert rt.relative(0.45, 0.5) == "-10.0 %"
    assert rt.baseline_query('What did Maya\'s dog do when it was "scared"?') == (
        '"maya\'s" OR "dog" OR "scared"'
    )


def test_a_held_out_only_dataset_reports_its_held_out_half_alone(tmp_path: Path) -> None:
    """A dataset whose conversations are all held out (bench/data/conversations/
    long-conversations.json) is measured with --split all like the others, without rows
    for an empty tuning half."""
    data = canonical()
    for conversation in data["conversations"]:
        conversation["split"] = "report"
    result = rt.run(load(write(tmp_path, data)), [rt.BASELINE], split="all")
    assert result.splits == ["report"] and result.count(rt.BASELINE.label, "report") == 2
    section = rt.section_markdown(result, "python bench/retrieval_turns.py x.json")
    assert "nan" not in section and "Split `tune`" not in section and "Split `report`" in section


def test_the_shipped_datasets_load() -> None:
    for path in sorted((BENCH / "data" / "conversations").glob("*.json")):
        dataset = load(path)
        assert dataset.questions and not dataset.skipped, path.name
