"""Game records (RULES.md section 11): recording, JSON Lines, replay checking and the CLI.

Corruption tests take a clean simulated record, break one thing and check that the replay
names the rule broken (R2-R25) at the right place.
"""

from __future__ import annotations

import copy
import os
import re
import json
import subprocess
import sys

import pytest

from conftest import within
from sergeant_major_env import engine
from sergeant_major_env.cards import MODE_NAMES, parse_card
from sergeant_major_env.records import (
    DEAL_KEYS, EXCHANGE_KEYS, FORMAT, RECORD_KEYS, TRICK_KEYS, Recorder, RecordError,
    check_record, check_records, read_jsonl, replay, simulate, write_jsonl,
)
from sergeant_major_env.cli.records import main
from sergeant_major_env.rules import Rules

CLI = [sys.executable, "-m", "sergeant_major_env", "records"]


@pytest.fixture(scope="module")
def full_games() -> list[dict]:
    """Three full 18-deal games with default rules (exchanges, all six modes per player)."""
    return list(simulate(3, seed=11))


@pytest.fixture(scope="module")
def short_games() -> list[dict]:
    return list(simulate(4, seed=3, rules=Rules(num_deals=3)))


def _problem(record: dict) -> str:
    problem = check_record(record)
    assert problem is not None, "the corrupted record replayed clean"
    return problem


def _suit(card: str) -> str:
    return card[1]


def _trump(deal: dict) -> str | None:
    return deal["mode"] if deal["mode"] in ("S", "C", "H", "D") else None


def _deals_with_exchanges(games, *, trump_given: bool | None = None):
    """(game index, deal index, exchange index) of exchanges, optionally only trump / non-trump gives."""
    for g, record in enumerate(games):
        for d, deal in enumerate(record["deals"]):
            for e, ex in enumerate(deal["exchanges"]):
                if trump_given is None or (_suit(ex["given"]) == deal["mode"]) == trump_given:
                    yield g, d, e


# ----------------------------------------------------------------------------- clean replay

def test_simulated_full_games_replay_clean_and_cover_exchanges(full_games):
    """Default rules, 18 deals (R4): every record replays; the sample holds forced and free returns (R21)."""
    for record in full_games:
        assert check_record(record) is None
        assert len(record["deals"]) == 18
    assert any(True for _ in _deals_with_exchanges(full_games, trump_given=False))
    assert any(True for _ in _deals_with_exchanges(full_games, trump_given=True))


@pytest.mark.parametrize("options", [
    ["num_deals=3"],
    ["exchanges=false", "num_deals=6"],
    ["must_overtake=true", "num_deals=6"],
    ["must_overtrump=true", "num_deals=6"],
    ["dealer_builds_talon=true", "num_deals=6"],
])
def test_simulated_records_replay_clean_under_each_rule_option(options):
    """Section 9: records made under every rule option replay under that option."""
    rules = Rules.from_strings(options)
    records = list(simulate(4, seed=21, rules=rules))
    assert [r["rules"] for r in records] == [rules.to_dict()] * 4
    for record in records:
        assert check_record(record) is None
        assert len(record["deals"]) == rules.num_deals
        if not rules.exchanges:
            assert all(deal["exchanges"] == [] for deal in record["deals"])


def test_record_made_without_must_overtake_breaks_it_R15(full_games):
    """R15: random play rarely heads a trick, so the same record under must_overtake fails with R15."""
    record = copy.deepcopy(full_games[0])
    record["rules"]["must_overtake"] = True
    problem = _problem(record)
    assert "R15" in problem and ", trick " in problem


def test_simulate_in_chunks_keeps_game_order_and_seeds():
    """Game i of a simulation has per-game seed S + i whatever the chunk size (engine.game_seeds)."""
    records = list(simulate(5, seed=40, rules=Rules(num_deals=2), batch_size=2))
    assert [r["seed"] for r in records] == [40, 41, 42, 43, 44]
    assert all(check_record(r) is None for r in records)


# ----------------------------------------------------------------------------- format

def test_record_has_every_section_11_key_and_no_exchanges_in_deal_1_R17(full_games):
    record = full_games[0]
    assert tuple(record) == RECORD_KEYS and record["format"] == FORMAT
    assert record["players"] == ["random"] * 3
    assert record["deals"][0]["exchanges"] == []  # R17: required, and empty in the first deal
    for deal in record["deals"]:
        assert tuple(deal) == DEAL_KEYS
        assert len(deal["tricks"]) == 16 and all(tuple(t) == TRICK_KEYS for t in deal["tricks"])
        assert all(tuple(ex) == EXCHANGE_KEYS for ex in deal["exchanges"])
        if deal["mode"] in ("NT", "MIN"):
            assert deal["exchanges"] == []  # R17
        assert sum(deal["points"]) == 0  # R25
        assert (deal["playmaker"], deal["third"]) == ((deal["dealer"] + 1) % 3, (deal["dealer"] + 2) % 3)  # R5
    assert record["scores"] == [sum(d["points"][s] for d in record["deals"]) for s in range(3)]  # R25
    # R8: each player chooses each of the six modes exactly once as playmaker.
    for seat in range(3):
        assert sorted(d["mode"] for d in record["deals"] if d["playmaker"] == seat) == sorted(MODE_NAMES)


def test_record_is_plain_json_and_jsonl_round_trips(tmp_path, short_games):
    path = tmp_path / "games.jsonl"
    assert write_jsonl(short_games, path) == len(short_games)
    assert read_jsonl(path) == short_games
    assert len(path.read_text().splitlines()) == len(short_games)


def test_read_jsonl_names_the_bad_line(tmp_path, short_games):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(short_games[0]) + "\n\n{not json\n")
    with pytest.raises(RecordError, match=r"line 3 is not valid JSON"):
        read_jsonl(path)


def test_record_seed_alone_reproduces_the_cards_R4_R10(short_games):
    """The record's seed is the game's own: engine.init([seed]) deals the recorded cards and first dealer."""
    for record in short_games:
        state = engine.init([record["seed"]], Rules(num_deals=3))
        assert int(state.first_dealer[0]) == record["first_dealer"]
        deal = record["deals"][0]
        assert [[parse_card(c) for c in hand] for hand in deal["hands"]] == state.dealt[0].tolist()
        assert [parse_card(c) for c in deal["talon"]] == state.talon_cards[0].tolist()


# ----------------------------------------------------------------------------- determinism

def test_same_seed_gives_identical_records():
    rules = Rules(num_deals=4)
    assert list(simulate(3, seed=9, rules=rules)) == list(simulate(3, seed=9, rules=rules))


def _record_with_lowest_legal_actions(seeds, rules, autoreset=False, games=None):
    """Record games with a policy that depends on each game only (its lowest legal action)."""
    state = engine.init(seeds, rules)
    recorder = Recorder(state, players=["low", "low", "low"])
    wanted = games or len(seeds)
    while len(recorder.finished) < wanted:
        recorder.step(engine.legal_action_mask(state).argmax(axis=1), autoreset=autoreset)
    return recorder.finished


def test_game_from_a_batch_equals_the_same_seed_alone():
    rules = Rules(num_deals=6)
    batch = _record_with_lowest_legal_actions([5, 6, 7], rules)
    for record in batch:
        alone = _record_with_lowest_legal_actions([record["seed"]], rules)
        assert alone == [record]
        assert check_record(record) is None


def test_recorder_with_autoreset_records_each_game_of_a_slot():
    """With autoreset, slot i plays seeds S+i, S+i+B, ...; each game is its own, clean record."""
    rules = Rules(num_deals=1)
    records = _record_with_lowest_legal_actions([100, 101], rules, autoreset=True, games=12)
    assert sorted(r["seed"] for r in records)[:10] == list(range(100, 110))
    for record in records:
        assert check_record(record) is None
        assert record == _record_with_lowest_legal_actions([record["seed"]], rules)[0]


def test_recorder_refuses_games_already_started():
    state = engine.init([1])
    engine.step(state, engine.legal_action_mask(state).argmax(axis=1))
    with pytest.raises(ValueError, match="at their start"):
        Recorder(state)


# ----------------------------------------------------------------------------- corrupted records

def _swap_cards(record, d, first, second):
    """Swap two played cards, given as (trick index, position)."""
    tricks = record["deals"][d]["tricks"]
    (t1, p1), (t2, p2) = first, second
    tricks[t1]["cards"][p1], tricks[t2]["cards"][p2] = tricks[t2]["cards"][p2], tricks[t1]["cards"][p1]


def _later_play(deal, t, seat, accept):
    """(trick, position) of a later card of ``seat`` in this deal that ``accept`` likes."""
    for t2 in range(t + 1, 16):
        trick = deal["tricks"][t2]
        p = (seat - trick["leader"]) % 3
        if accept(trick["cards"][p]):
            return t2, p
    return None


def _corrupt_play(games, wanted, replacement):
    """Swap a follower's card ``wanted(deal, led, card)`` for a later card ``replacement(deal, led, card)``."""
    for game in games:
        for d, deal in enumerate(game["deals"]):
            for t, trick in enumerate(deal["tricks"]):
                led = _suit(trick["cards"][0])
                for p in (1, 2):
                    card = trick["cards"][p]
                    if not wanted(deal, led, card):
                        continue
                    seat = (trick["leader"] + p) % 3
                    later = _later_play(deal, t, seat, lambda c: replacement(deal, led, c))
                    if later:
                        record = copy.deepcopy(game)
                        _swap_cards(record, d, (t, p), later)
                        return record, f"deal {d + 1}, trick {t + 1}, seat {seat} played {deal['tricks'][later[0]]['cards'][later[1]]}"
    raise AssertionError("no such play in the sample")


def test_renege_is_rejected_R13(full_games):
    """R13: a player that could follow suit played another suit (a card it held, played later)."""
    record, where = _corrupt_play(full_games, lambda deal, led, c: _suit(c) == led,
                                  lambda deal, led, c: _suit(c) != led)
    assert _problem(record).startswith(f"{where}: R13: ")


def test_failure_to_trump_is_rejected_R14(full_games):
    """R14: a player that could not follow and held a trump played a plain card instead."""
    record, where = _corrupt_play(
        full_games,
        lambda deal, led, c: _trump(deal) not in (None, led) and _suit(c) == _trump(deal),
        lambda deal, led, c: _suit(c) not in (led, _trump(deal)))
    assert _problem(record).startswith(f"{where}: R14: ")


def test_wrong_forced_return_is_rejected_R21(full_games):
    """R21: after a non-trump the receiver must return its highest card of that suit."""
    g, d, e = next(_deals_with_exchanges(full_games, trump_given=False))
    record = copy.deepcopy(full_games[g])
    ex = record["deals"][d]["exchanges"][e]
    forced = ex["returned"]
    ex["returned"] = record["deals"][d]["talon"][0]  # any other card
    problem = _problem(record)
    assert problem.startswith(f"deal {d + 1}, exchange {e + 1}: R21: ")
    assert f"must return {forced}" in problem


def test_free_return_of_a_card_not_held_is_rejected_R21(full_games):
    """R21: after a trump the return is free, but it must be a card the receiver holds."""
    g, d, e = next(_deals_with_exchanges(full_games, trump_given=True))
    record = copy.deepcopy(full_games[g])
    ex = record["deals"][d]["exchanges"][e]
    ex["returned"] = record["deals"][d]["talon"][0]  # the talon is nobody's during exchanges
    assert _problem(record).startswith(f"deal {d + 1}, exchange {e + 1}, seat {ex['receiver']} returned "
                                       f"{ex['returned']}: R21: seat {ex['receiver']} does not hold")


def test_giving_a_card_not_held_is_rejected_R21(full_games):
    g, d, e = next(_deals_with_exchanges(full_games))
    record = copy.deepcopy(full_games[g])
    record["deals"][d]["exchanges"][e]["given"] = record["deals"][d]["talon"][1]
    assert ": R21: " in _problem(record) and f"deal {d + 1}, exchange {e + 1}" in _problem(record)


def test_missing_exchange_is_rejected_R19(full_games):
    g, d, _ = next(_deals_with_exchanges(full_games))
    record = copy.deepcopy(full_games[g])
    n = len(record["deals"][d]["exchanges"])
    record["deals"][d]["exchanges"].pop()
    assert _problem(record).startswith(f"deal {d + 1}, exchange {n}: R19: ")


def test_extra_exchange_after_the_due_ones_is_rejected_R19(full_games):
    g, d, _ = next(_deals_with_exchanges(full_games))
    record = copy.deepcopy(full_games[g])
    exchanges = record["deals"][d]["exchanges"]
    exchanges.append(dict(exchanges[-1]))
    assert _problem(record).startswith(f"deal {d + 1}, exchange {len(exchanges)}: R19: ")


def test_exchange_in_the_first_deal_is_rejected_R17(full_games):
    g, d, e = next(_deals_with_exchanges(full_games))
    record = copy.deepcopy(full_games[g])
    record["deals"][0]["exchanges"] = [record["deals"][d]["exchanges"][e]]
    assert _problem(record).startswith("deal 1, exchange 1: R17: there are no exchanges in the first deal")


def test_exchange_in_a_nt_or_min_deal_is_rejected_R17(full_games):
    record = copy.deepcopy(full_games[0])
    d = next(i for i, deal in enumerate(record["deals"]) if i > 0 and deal["mode"] in ("NT", "MIN"))
    deal = record["deals"][d]
    deal["exchanges"] = [{"giver": deal["dealer"], "receiver": deal["playmaker"],
                          "given": deal["hands"][deal["dealer"]][0], "returned": deal["hands"][deal["dealer"]][0]}]
    assert _problem(record).startswith(f"deal {d + 1}, exchange 1: R17: there are no exchanges in {deal['mode']} deals")


def test_exchange_pairs_out_of_order_are_rejected_R20(full_games):
    """R20: the giver with the larger target goes first, and each pair completes before the next."""
    for game in full_games:
        for d, deal in enumerate(game["deals"]):
            pairs = [(ex["giver"], ex["receiver"]) for ex in deal["exchanges"]]
            if len(set(pairs)) == 2:
                record = copy.deepcopy(game)
                exchanges = record["deals"][d]["exchanges"]
                first = pairs[0]
                exchanges.sort(key=lambda ex: (ex["giver"], ex["receiver"]) == first)  # second pair first
                assert _problem(record).startswith(f"deal {d + 1}, exchange 1: R20: ")
                return
    raise AssertionError("no deal with two exchange pairs in the sample")


def test_exchange_by_a_player_that_is_no_giver_is_rejected_R18(full_games):
    g, d, _ = next(_deals_with_exchanges(full_games))
    record = copy.deepcopy(full_games[g])
    ex = record["deals"][d]["exchanges"][0]
    ex["giver"], ex["receiver"] = ex["receiver"], ex["giver"]
    assert _problem(record).startswith(f"deal {d + 1}, exchange 1: R18: ")


def test_wrong_trick_winner_is_rejected_R16(full_games):
    record = copy.deepcopy(full_games[0])
    trick = record["deals"][2]["tricks"][4]
    trick["winner"] = (trick["winner"] + 1) % 3
    assert _problem(record).startswith("deal 3, trick 5: R16: ")


def test_wrong_trick_leader_is_rejected(full_games):
    """Section 5: the playmaker leads the first trick, the winner of a trick leads the next."""
    record = copy.deepcopy(full_games[0])
    trick = record["deals"][1]["tricks"][0]
    trick["leader"] = (trick["leader"] + 1) % 3
    assert _problem(record).startswith("deal 2, trick 1: section 5: ")


def test_wrong_tricks_won_is_rejected_R23(full_games):
    record = copy.deepcopy(full_games[0])
    won = record["deals"][0]["tricks_won"]
    won[0], won[1] = won[0] + 1, won[1] - 1
    assert _problem(record).startswith("deal 1: R23: ")


@pytest.mark.parametrize("modes, rule", [(("S", "C", "H", "D", "NT"), "R23"), (("MIN",), "R24")])
def test_wrong_points_are_rejected_R23_R24(full_games, modes, rule):
    record = copy.deepcopy(full_games[0])
    d = next(i for i, deal in enumerate(record["deals"]) if deal["mode"] in modes)
    points = record["deals"][d]["points"]
    points[0], points[1] = points[0] + 1, points[1] - 1  # still sums to 0
    assert _problem(record).startswith(f"deal {d + 1}: {rule}: ")


def test_wrong_scores_are_rejected_R25(full_games):
    record = copy.deepcopy(full_games[0])
    record["scores"][2] += 1
    assert _problem(record).startswith("scores: R25: ")


def test_wrong_dealer_rotation_is_rejected_R4(full_games):
    record = copy.deepcopy(full_games[0])
    deal = record["deals"][1]
    deal["dealer"], deal["playmaker"], deal["third"] = deal["third"], deal["dealer"], deal["playmaker"]
    assert _problem(record).startswith("deal 2: R4: the dealer is seat ")


def test_first_dealer_differing_from_deal_1_is_rejected_R4(full_games):
    record = copy.deepcopy(full_games[0])
    record["first_dealer"] = (record["first_dealer"] + 1) % 3
    assert _problem(record).startswith("deal 1: R4: ")


def test_wrong_playmaker_is_rejected_R5(full_games):
    record = copy.deepcopy(full_games[0])
    deal = record["deals"][0]
    deal["playmaker"], deal["third"] = deal["third"], deal["playmaker"]
    assert _problem(record).startswith("deal 1: R5: the playmaker is seat ")


@pytest.mark.parametrize("change, message", [
    (lambda deals: deals.pop(), "R4: the record has 17 deal(s)"),
    (lambda deals: deals.append(copy.deepcopy(deals[0])), "deal 19: R4: "),
    (lambda deals: deals[3].update(number=7), "deal 4: section 11: deals are numbered"),
])
def test_wrong_number_of_deals_is_rejected_R4(full_games, change, message):
    record = copy.deepcopy(full_games[0])
    change(record["deals"])
    assert _problem(record).startswith(message)


def test_card_dealt_twice_is_rejected_R2_R10(full_games):
    record = copy.deepcopy(full_games[0])
    hands = record["deals"][1]["hands"]
    hands[1][0] = hands[0][5]
    assert _problem(record).startswith(f"deal 2: R2, R10: {hands[0][5]} is dealt twice (hand of seat 0 and hand of seat 1)")


def test_mode_chosen_twice_by_one_playmaker_is_rejected_R8(full_games):
    """Deal 4 has deal 1's playmaker again (R4, R5); choosing the same mode breaks R8."""
    record = copy.deepcopy(full_games[0])
    deals = record["deals"]
    deals[3]["mode"] = deals[0]["mode"]
    assert _problem(record) == (f"deal 4, seat {deals[3]['playmaker']} chose mode {deals[0]['mode']}: R8: seat "
                                f"{deals[3]['playmaker']} has already chosen mode {deals[0]['mode']} as playmaker")


def test_discarding_a_card_not_held_is_rejected(full_games):
    record = copy.deepcopy(full_games[0])
    deal = record["deals"][0]
    deal["discards"][3] = deal["discards"][0]
    assert _problem(record).startswith(f"deal 1, discard 4, seat {deal['playmaker']} discarded ")


# ----------------------------------------------------------------------------- malformed records

@pytest.mark.parametrize("change, message", [
    (lambda r: r.pop("seed"), "missing key 'seed'"),
    (lambda r: r["deals"][0].pop("talon"), "deal 1: missing key 'talon'"),
    (lambda r: r.update(extra=1), "unknown key 'extra'"),
    (lambda r: r.update(format="other/2"), "format: expected 'sergeant-major-record/1'"),
    (lambda r: r["deals"][0]["hands"][2].__setitem__(3, "1X"), "deal 1, hands[2][3]: unknown card '1X'"),
    (lambda r: r["deals"][1]["tricks"][0]["cards"].__setitem__(0, 7), "deal 2, trick 1, cards[0]: unknown card 7"),
    (lambda r: r["deals"][0].update(dealer="1"), "deal 1, dealer: expected an integer 0..2, got '1'"),
    (lambda r: r["deals"][0].update(mode="X"), "deal 1, mode: expected one of S, C, H, D, NT, MIN"),
    (lambda r: r["deals"][0]["hands"][0].pop(), "deal 1, hands[0]: R10: 16 cards a hand: expected 16 entries, got 15"),
    (lambda r: r["deals"][0]["tricks"].pop(), "deal 1, tricks: R10: 16 tricks a deal"),
    (lambda r: r["rules"].update(speed=3), "rules: unknown rule option(s) speed; known options: num_deals"),
    (lambda r: r["rules"].pop("must_overtake"), "rules: missing key 'must_overtake'"),
    (lambda r: r["rules"].update(exchanges="yes"), "rules: rule option exchanges must be true or false"),
    (lambda r: r.update(rules=[]), "rules: expected a JSON object, got list"),
    (lambda r: r.update(deals={}), "deals: expected a list, got dict"),
    (lambda r: r.update(scores=[1.5, 0, 0]), "scores[0]: expected an integer"),
])
def test_malformed_record_gets_a_clear_message(short_games, change, message):
    record = copy.deepcopy(short_games[0])
    change(record)
    with pytest.raises(RecordError) as info:
        replay(record)
    assert str(info.value).startswith(message)


def test_non_object_record_gets_a_clear_message():
    assert check_record([1, 2]) == "expected a JSON object, got list"


# ----------------------------------------------------------------------------- a file replayed as one batch

@pytest.fixture(scope="module")
def batch_games() -> list[dict]:
    return list(simulate(18, seed=70))


def _break_exchange_order(record: dict) -> None:
    """R20: the first deal with two exchange pairs gets its second pair first."""
    for deal in record["deals"]:
        pairs = [(ex["giver"], ex["receiver"]) for ex in deal["exchanges"]]
        if len(set(pairs)) == 2:
            deal["exchanges"].sort(key=lambda ex: (ex["giver"], ex["receiver"]) == pairs[0])
            return
    raise AssertionError("no deal with two exchange pairs in this game")


def _broken_batch(games: list[dict]) -> list[str]:
    """The lines of a file: clean records and, among them, records broken in different ways at
    different steps (one with two faults, one under other rules, one malformed), a blank line
    and a line that is not JSON."""
    records = copy.deepcopy(games)
    records[1], _ = _corrupt_play([games[1]], lambda deal, led, c: _suit(c) == led,
                                  lambda deal, led, c: _suit(c) != led)  # R13
    trick = records[2]["deals"][2]["tricks"][4]
    trick["winner"] = (trick["winner"] + 1) % 3  # R16 ...
    records[2]["scores"][0] += 1  # ... and a later fault, not reported: only the first one is
    _, d, e = next(_deals_with_exchanges([games[4]], trump_given=False))
    records[4]["deals"][d]["exchanges"][e]["returned"] = records[4]["deals"][d]["talon"][0]  # R21
    _, d, _ = next(_deals_with_exchanges([games[5]]))
    records[5]["deals"][d]["exchanges"].pop()  # R19
    records[6]["deals"][3]["mode"] = records[6]["deals"][0]["mode"]  # R8
    hands = records[7]["deals"][5]["hands"]
    hands[1][0] = hands[0][5]  # R2, R10
    records[8]["rules"]["must_overtake"] = True  # R15, and a second rule set in the file
    records[9]["deals"][0]["talon"][0] = "1X"  # malformed
    records[10]["deals"].append(copy.deepcopy(records[10]["deals"][0]))  # R4
    d = next(i for i, deal in enumerate(records[11]["deals"]) if deal["mode"] == "MIN")
    points = records[11]["deals"][d]["points"]
    points[0], points[1] = points[0] + 1, points[1] - 1  # R24
    _break_exchange_order(records[12])  # R20
    trick = records[13]["deals"][8]["tricks"][6]
    trick["leader"] = (trick["leader"] + 1) % 3  # section 5: the winner of the trick before leads
    records[14], _ = _corrupt_play(
        [games[14]],
        lambda deal, led, c: _trump(deal) not in (None, led) and _suit(c) == _trump(deal),
        lambda deal, led, c: _suit(c) not in (led, _trump(deal)))  # R14
    won = records[15]["deals"][17]["tricks_won"]
    won[0], won[1] = won[0] + 1, won[1] - 1  # R23, in the last deal
    lines = [json.dumps(record) for record in records]
    return lines[:4] + [""] + lines[4:6] + ["{oops"] + lines[6:]


# What `records check` printed for _broken_batch(batch_games) when it replayed one record at a
# time (the code before the batch replay): the batch must word each record's first problem so.
ONE_AT_A_TIME_REPORT = [
    "record 2 (line 2): deal 1, trick 1, seat 0 played 2C: R13: seat 0 must follow suit D",
    "record 3 (line 3): deal 3, trick 5: R16: seat 0 wins 2D JD KD (led by seat 1), not seat 1",
    "record 5 (line 6): deal 3, exchange 1: R21: seat 1 received AH, not a trump, and must return AH "
    "(the highest H it holds), not 9H",
    "record 6 (line 7): deal 3, exchange 5: R19: the record stops after 4 exchange(s), but cards are "
    "still due (seat 0 -> seat 1: 1)",
    "record 7 (line 8): line 8 is not valid JSON: Expecting property name enclosed in double quotes (column 2)",
    "record 8 (line 9): deal 4, seat 1 chose mode MIN: R8: seat 1 has already chosen mode MIN as playmaker",
    "record 9 (line 10): deal 6: R2, R10: 5D is dealt twice (hand of seat 0 and hand of seat 1)",
    "record 10 (line 11): deal 1, trick 1, seat 2 played 7S: R15: with must_overtake, seat must beat the "
    "best card of the led suit",
    "record 11 (line 12): deal 1, talon[0]: unknown card '1X': expected a rank of '23456789TJQKA' then a "
    "suit of 'SCHD', like 'QH'",
    "record 12 (line 13): deal 19: R4: a game of num_deals=18 has 18 deals, the record has 19",
    "record 13 (line 14): deal 9: R24: in mode MIN the points are [1, 3, -4] (tricks [4, 5, 7], dealer "
    "seat 1), not [2, 2, -4]",
    "record 14 (line 15): deal 3, exchange 1: R20: seat 1 -> seat 0 exchanges first (the giver with the "
    "larger target first, then its receiver with the larger target; a pair completes all its cards "
    "first), not seat 1 -> seat 2",
    "record 15 (line 16): deal 9, trick 7: section 5: seat 0 leads (the winner of trick 6 leads), not seat 1",
    "record 16 (line 17): deal 3, trick 8, seat 0 played 3S: R14: seat 0 cannot follow suit and must play a trump",
    "record 17 (line 18): deal 18: R23: the tricks give tricks_won [5, 7, 4], not [6, 6, 4]",
    "15 of 19 records have problems",
]


def test_check_of_a_file_words_each_broken_record_as_the_one_at_a_time_replay_did(tmp_path, batch_games, capsys):
    """Replayed as one batch, each broken record still gets its own first problem, rule id,
    record and line numbers as before, whatever the records around it."""
    path = tmp_path / "games.jsonl"
    path.write_text("\n".join(_broken_batch(batch_games)) + "\n")
    assert main(["check", str(path)]) == 1
    assert capsys.readouterr().out.splitlines() == ONE_AT_A_TIME_REPORT


def test_records_replayed_together_get_the_problem_each_gets_alone(batch_games):
    """check_records (one batch per rule set) agrees with check_record (a batch of one) on every
    record, in file order; the clean ones replay clean in the batch too."""
    records = [json.loads(line) for line in _broken_batch(batch_games) if line.strip() and line != "{oops"]
    together = check_records(records)
    assert together == [check_record(record) for record in records]
    assert [i for i, problem in enumerate(together) if problem is None] == [0, 3, 16, 17]


def test_check_steps_the_records_of_a_rule_set_together(batch_games, monkeypatch):
    """One engine.step per decision for the whole batch: checking 18 full games takes about as
    many steps as checking the longest one alone, not 18 times as many."""
    calls = []
    real_step = engine.step

    def counted_step(*args, **kwargs):
        calls.append(1)
        return real_step(*args, **kwargs)

    monkeypatch.setattr(engine, "step", counted_step)
    assert check_records(batch_games) == [None] * len(batch_games)
    together = len(calls)
    alone = []
    for record in batch_games:
        calls.clear()
        assert check_record(record) is None
        alone.append(len(calls))
    assert max(alone) <= together < 1.2 * max(alone)


def test_cli_check_an_engine_failure_costs_one_line_for_that_record_only(tmp_path, short_games, monkeypatch, capsys):
    """If the batch trips inside the engine, the records are replayed one at a time, so only the
    record that trips it reports the internal error; the others are reported as usual."""
    records = copy.deepcopy(short_games)
    records[1]["deals"][0]["discards"][3] = records[1]["deals"][0]["discards"][0]  # needs illegal_reason
    records[2]["scores"][0] += 1
    path = tmp_path / "games.jsonl"
    write_jsonl(records, path)

    def broken(*args):
        raise RuntimeError("boom")

    monkeypatch.setattr(engine, "illegal_reason", broken)
    assert main(["check", str(path)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "record 2 (line 2): internal error while replaying (RuntimeError: boom); please report it",
        f"record 3 (line 3): scores: R25: the totals of the deals' points are {short_games[2]['scores']}, "
        f"not {records[2]['scores']}",
        "2 of 4 records have problems",
    ]


# ----------------------------------------------------------------------------- command line

def test_cli_simulate_then_check_in_subprocesses(tmp_path):
    """The documented commands: simulate writes N records, check replays them and exits 0."""
    out = tmp_path / "games.jsonl"
    sim = subprocess.run([*CLI, "simulate", "--games", "3", "--seed", "4", "--out", str(out),
                          "--option", "num_deals=2", "--option", "must_overtrump=true"],
                         capture_output=True, text=True, timeout=60)
    assert sim.returncode == 0, sim.stderr
    records = read_jsonl(out)
    assert [r["seed"] for r in records] == [4, 5, 6]
    assert records[0]["rules"] == Rules(num_deals=2, must_overtrump=True).to_dict()
    check = subprocess.run([*CLI, "check", str(out)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and check.stdout.strip() == "3 records OK", check.stdout + check.stderr


def test_cli_check_names_each_bad_record(tmp_path, short_games, capsys):
    records = copy.deepcopy(short_games)
    records[1]["deals"][0]["tricks"][0]["winner"] += 1
    records[1]["deals"][0]["tricks"][0]["winner"] %= 3
    records[3]["scores"][0] += 1
    path = tmp_path / "games.jsonl"
    write_jsonl(records, path)
    assert main(["check", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("record 2 (line 2): deal 1, trick 1: R16: ")
    assert lines[1].startswith("record 4 (line 4): scores: R25: ")
    assert lines[2] == "2 of 4 records have problems"


def test_cli_check_of_malformed_files_prints_one_line_no_traceback(tmp_path, short_games):
    good = json.dumps(short_games[0])
    unknown_card = copy.deepcopy(short_games[0])
    unknown_card["deals"][0]["talon"][0] = "1X"
    missing_key = json.dumps({k: v for k, v in short_games[0].items() if k != "players"})
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([good, "{oops", json.dumps(unknown_card), missing_key, "[]"]) + "\n")
    result = subprocess.run([*CLI, "check", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and result.stderr == ""
    assert result.stdout.splitlines() == [
        "record 2 (line 2): line 2 is not valid JSON: Expecting property name enclosed in double quotes (column 2)",
        "record 3 (line 3): deal 1, talon[0]: unknown card '1X': expected a rank of '23456789TJQKA' "
        "then a suit of 'SCHD', like 'QH'",
        "record 4 (line 4): missing key 'players'",
        "record 5 (line 5): expected a JSON object, got list",
        "4 of 5 records have problems",
    ]


def _not_records(tmp_path, kind):
    """A path that is no records file: a link to /dev/zero, a pipe, a line of 1.5 million characters."""
    path = tmp_path / "r.jsonl"
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "pipe":
        os.mkfifo(path)
    else:
        path.write_text("x" * 1_500_000 + "\n" + json.dumps(next(iter(simulate(1, rules=Rules(num_deals=1))))) + "\n")
    return path


_NOT_RECORDS = {"dev-zero": r"records file '.*r\.jsonl' is not a regular file$",
                "pipe": r"records file '.*r\.jsonl' is not a regular file$",
                "long-line": r".*r\.jsonl line 1: longer than 1,000,000 characters \(a game record of 18 deals is about "
                             r"26,000\); not a game-record file$"}


@pytest.mark.parametrize("kind", list(_NOT_RECORDS))
def test_check_and_html_refuse_what_is_no_records_file_in_one_line_at_once(tmp_path, capsys, kind):
    """Issue 50: `records check` and `records html` of a link to /dev/zero read forever without a
    word (an over-long line was skipped up to a newline that never came); a pipe waited for a
    writer. Each is refused in one line before it is read, a file with an over-long line at it."""
    path = _not_records(tmp_path, kind)
    with within(20):
        assert main(["check", str(path)]) == 2
        out, err = capsys.readouterr()
        assert out == "" and len(err.splitlines()) == 1 and re.match("error: " + _NOT_RECORDS[kind], err.strip())
        with pytest.raises(SystemExit) as stop:
            main(["html", str(path), "--out", str(tmp_path / "page.html")])
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and re.match("sergeant-major records html: error: " + _NOT_RECORDS[kind],
                                                       err.strip()), err
        with pytest.raises(RecordError if kind == "long-line" else ValueError, match=_NOT_RECORDS[kind]):
            read_jsonl(str(path))
    assert not (tmp_path / "page.html").exists()


def test_cli_check_of_missing_or_empty_file(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["check", str(empty)]) == 1


@pytest.mark.parametrize("argv", [["--help"], ["simulate", "--help"], ["check", "--help"], ["html", "--help"]])
def test_cli_help(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 0
    assert "usage:" in capsys.readouterr().out


@pytest.mark.parametrize("option", ["speed=3", "num_deals=abc", "num_deals=30", "exchanges=maybe", "novalue"])
def test_cli_bad_option_exits_2_naming_known_options(tmp_path, capsys, option):
    with pytest.raises(SystemExit) as info:
        main(["simulate", "--games", "1", "--out", str(tmp_path / "x.jsonl"), "--option", option])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "known options: num_deals, exchanges, must_overtake, must_overtrump, dealer_builds_talon" in err
    assert not (tmp_path / "x.jsonl").exists()


def test_cli_refuses_a_rule_option_given_twice_in_one_line(tmp_path, capsys):
    """`--option num_deals=1 num_deals=2` is an error naming the option, not the last one winning."""
    with pytest.raises(SystemExit) as info:
        main(["simulate", "--games", "1", "--out", str(tmp_path / "x.jsonl"), "--option", "num_deals=1",
              "--option", "num_deals=2"])
    assert info.value.code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1 and "rule option num_deals given twice (num_deals=1 and num_deals=2)" in errors[0]
    assert not (tmp_path / "x.jsonl").exists()


def test_cli_simulate_accepts_options_like_the_other_clis(tmp_path):
    """`--options` is an alias of `--option`, as in evaluate.py, train.py and the terminal game."""
    out = tmp_path / "games.jsonl"
    assert main(["simulate", "--games", "2", "--out", str(out), "--options", "num_deals=1", "exchanges=false"]) == 0
    assert {json.dumps(r["rules"]) for r in read_jsonl(out)} == {json.dumps(Rules(num_deals=1, exchanges=False).to_dict())}


def _cli_error(argv, tmp_path) -> str:
    """Run the CLI in a subprocess; it must exit 2 with one error line (after argparse's usage), no traceback."""
    done = subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, done.stderr
    return errors[0]


@pytest.mark.parametrize("seed, message", [
    ("99999999999999999999", r"--seed: must be an integer from 0 to 2\*\*63 - 1"),
    ("-1", r"--seed: must be an integer from 0 to 2\*\*63 - 1"),
    (str(2**63 - 2), r"seed 9223372036854775806 is too large for 3 games: .* at most 9223372036854775805"),
])
def test_cli_simulate_refuses_seeds_beyond_the_seed_rule_in_one_line(tmp_path, seed, message):
    """One seed rule (seeding.py): game i plays seed + i, so the last game's seed must fit too."""
    line = _cli_error(["simulate", "--games", "3", "--seed", seed, "--out", "x.jsonl"], tmp_path)
    assert re.search(message, line), line
    assert not (tmp_path / "x.jsonl").exists()


def test_simulate_checks_its_seeds_before_any_game():
    with pytest.raises(ValueError, match="seed must be an integer from 0 to 2"):
        list(simulate(1, seed=2**64))
    with pytest.raises(ValueError, match="too large for 2 games"):
        list(simulate(2, seed=2**63 - 1))
    assert [r["seed"] for r in simulate(1, seed=2**63 - 1, rules=Rules(num_deals=1))] == [2**63 - 1]


@pytest.mark.parametrize("out, message", [
    ("nosuchfolder/x.jsonl", "folder 'nosuchfolder' does not exist"),
    (".", "is a folder"),
])
def test_cli_simulate_checks_out_before_playing(tmp_path, out, message):
    line = _cli_error(["simulate", "--games", "100000", "--out", out], tmp_path)
    assert message in line, line


def test_cli_simulate_replaces_an_existing_out_only_with_overwrite(tmp_path):
    """Like `records html`, train.py's run folders and training.ship: an existing file is kept
    (one error line, before any game) unless --overwrite."""
    out = tmp_path / "games.jsonl"
    out.write_text("old content\n")
    line = _cli_error(["simulate", "--games", "100000", "--out", "games.jsonl"], tmp_path)
    assert line.endswith("--out file 'games.jsonl' exists; add --overwrite to replace it"), line
    assert out.read_text() == "old content\n"
    assert main(["simulate", "--games", "2", "--out", str(out), "--option", "num_deals=1", "--overwrite"]) == 0
    assert len(read_jsonl(out)) == 2


def test_interrupted_simulate_leaves_out_as_it_was(tmp_path):
    """Records are written to a temporary file renamed at the end: an interrupted run leaves
    --out untouched (not truncated to 0 bytes) and no temporary file behind."""
    out = tmp_path / "games.jsonl"
    out.write_text("old content\n")

    def interrupted():
        yield from simulate(2, seed=0, rules=Rules(num_deals=1))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_jsonl(interrupted(), out)
    assert out.read_text() == "old content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["games.jsonl"]


def test_cli_simulate_interrupted_by_ctrl_c_says_so_and_writes_nothing(tmp_path, monkeypatch, capsys):
    import sergeant_major_env.cli.records as records_module

    def interrupted(*args, **kwargs):
        yield from simulate(1, seed=0, rules=Rules(num_deals=1))
        raise KeyboardInterrupt

    monkeypatch.setattr(records_module, "simulate", interrupted)
    assert main(["simulate", "--games", "5", "--out", str(tmp_path / "x.jsonl")]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
