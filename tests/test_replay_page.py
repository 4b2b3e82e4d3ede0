"""The replay page (`records html`): one self-contained HTML file stepping through a record.

Without a browser: the page references nothing outside itself, and the data it embeds is the
record's game as the engine replays it. With headless Chromium (skipped where none is
installed): the page's script runs, opens the frame named by the URL hash, steps with the
keys and buttons, and shows the players and the final scores.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from sergeant_major_env import engine
from sergeant_major_env.cards import parse_card
from sergeant_major_env.cli.records import main
from sergeant_major_env.records import RecordError, simulate, write_jsonl
from sergeant_major_env.render import MODE_TEXT, card_text, hand_text
from sergeant_major_env.replay_page import page_data, page_html

PLAYERS = ["alice", "bob", "carol"]
SEATS = [f"seat {seat} ({name})" for seat, name in enumerate(PLAYERS)]
CLI = [sys.executable, "-m", "sergeant_major_env", "records"]
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def games() -> list[dict]:
    """Three full 18-deal games (exchanges included) with three different player names."""
    records = list(simulate(3, seed=5))
    for record in records:
        record["players"] = list(PLAYERS)
    return records


@pytest.fixture(scope="module")
def games_file(tmp_path_factory, games) -> Path:
    path = tmp_path_factory.mktemp("records") / "games.jsonl"
    write_jsonl(games, path)
    return path


@pytest.fixture(scope="module")
def page(tmp_path_factory, games_file) -> Path:
    """The page of record 2, written by the documented command."""
    out = tmp_path_factory.mktemp("page") / "game.html"
    assert main(["html", str(games_file), "--game", "2", "--out", str(out)]) == 0
    return out


def embedded(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', html, re.S)
    assert match, "no embedded data"
    return json.loads(match.group(1))


def _texts(cards: list[str]) -> list[str]:
    return [card_text(parse_card(card)) for card in cards]


# ----------------------------------------------------------------------------- without a browser

def test_page_is_one_self_contained_file(page):
    """No network, no server: no URL, no external script, style, image or font; the script and
    the style are inline and the game's data is embedded as JSON."""
    html = page.read_text(encoding="utf-8")
    assert "http://" not in html and "https://" not in html
    assert not re.search(r"\b(src|href)\s*=", html, re.I)
    assert "<link" not in html.lower() and "@import" not in html and "url(" not in html
    assert html.count("<script") == 2 and html.count("<style>") == 1
    assert embedded(html)["players"] == PLAYERS


def test_embedded_data_is_the_record_as_the_engine_replays_it(page, games):
    """Every deal: roles (R4, R5), mode, targets (R23, R24), talon, exchanges (R21), discards,
    each trick's cards and winner (R16), points and running scores (R25); the final scores."""
    record, data = games[1], embedded(page.read_text(encoding="utf-8"))
    assert data["seats"] == SEATS and data["final_scores"] == record["scores"]
    totals = [0, 0, 0]
    for deal, shown in zip(record["deals"], data["deals"], strict=True):
        mode = ("S", "C", "H", "D", "NT", "MIN").index(deal["mode"])
        assert shown["roles"].index("dealer") == deal["dealer"] and shown["roles"].index("playmaker") == deal["playmaker"]
        assert shown["mode"] == MODE_TEXT[mode]
        assert shown["targets"] == engine.targets([deal["dealer"]], [mode])[0].tolist()
        assert shown["talon"] == _texts(deal["talon"])
        assert [(e["giver"], e["receiver"], e["given"], e["returned"]) for e in shown["exchanges"]] == [
            (e["giver"], e["receiver"], *_texts([e["given"], e["returned"]])) for e in deal["exchanges"]]
        assert shown["discards"] == hand_text(sum(1 << parse_card(card) for card in deal["discards"]))
        totals = [total + points for total, points in zip(totals, deal["points"])]
        assert shown["points"] == deal["points"] and shown["scores"] == totals
        frames = [frame for frame in data["frames"] if frame["deal"] == deal["number"] - 1 and frame["kind"] != "final"]
        assert [frame["kind"] for frame in frames] == (["deal", "mode"] + ["exchange"] * len(deal["exchanges"])
                                                       + ["talon", "discards"] + ["trick"] * 16 + ["points"])
        assert frames[0]["hands"] == [hand_text(sum(1 << parse_card(c) for c in hand)) for hand in deal["hands"]]
        tricks = [frame for frame in frames if frame["kind"] == "trick"]
        for number, (trick, frame) in enumerate(zip(deal["tricks"], tricks), start=1):
            seats = [(trick["leader"] + position) % 3 for position in range(3)]
            assert frame["trick"] == [[seat, card] for seat, card in zip(seats, _texts(trick["cards"]))]
            assert frame["winner"] == trick["winner"]
            assert sum(frame["tricks_won"]) == number
            # 16 - number cards left in each hand (hand_text: suit symbol, then ranks)
            assert [len(hand.split()) - len(re.findall("[♠♣♥♦]", hand)) for hand in frame["hands"]] == [16 - number] * 3
        assert tricks[-1]["tricks_won"] == deal["tricks_won"] and frames[-1]["scores"] == totals
    assert data["frames"][-1]["kind"] == "final" and data["frames"][-1]["scores"] == record["scores"]


def test_a_record_that_does_not_replay_gets_no_page(games):
    """The page is the engine's replay: a record the engine refuses is refused with its first problem."""
    record = copy.deepcopy(games[0])
    record["deals"][2]["tricks"][4]["winner"] = (record["deals"][2]["tricks"][4]["winner"] + 1) % 3
    with pytest.raises(RecordError, match=r"^the record does not replay: deal 3, trick 5: R16: "):
        page_data(record)


def test_player_names_cannot_break_out_of_the_page(games):
    """Names are data: the embedded JSON cannot close its <script> element, the title is escaped."""
    record = copy.deepcopy(games[0])
    record["players"] = ["</script><b>x", "a&b", "c"]
    html = page_html(page_data(record, title="<i>t</i>"))
    assert html.count("</script>") == 2 and "<b>x" not in html and "<i>t</i>" not in html
    assert embedded(html)["players"] == record["players"]


@pytest.mark.parametrize("title", ["games __DATA__.jsonl", "__TITLE__ __DATA__ __TITLE__", "a__DATA__b__DATA__"])
def test_placeholders_in_the_title_stay_text(games, title):
    """The template is filled in one pass: a file name holding __DATA__ does not pull the game's
    JSON into the title (issue 20, item 11), and __TITLE__ in it is not filled again."""
    record = copy.deepcopy(games[0])
    html = page_html(page_data(record, title=title))
    assert re.search(r"<title>(.*)</title>", html).group(1) == title
    assert html.count('"format":"sergeant-major-replay-page/1"') == 1  # the game's JSON once, in its script
    assert embedded(html)["title"] == title and embedded(html)["players"] == PLAYERS


def test_a_long_title_is_cut_and_a_long_player_name_is_refused(games):
    """A 100 KB name would be repeated in every caption (a 48 MB page): records hold names of
    at most 200 characters, and a title keeps 200."""
    record = copy.deepcopy(games[0])
    html = page_html(page_data(record, title="t" * 100_000))
    assert len(re.search(r"<title>(.*)</title>", html).group(1)) == 200
    record["players"] = ["x" * 100_000, "b", "c"]
    with pytest.raises(RecordError, match=r"players\[0\]: a name is at most 200 characters, got 100,000$"):
        page_data(record)


def _cli(argv, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=120, cwd=cwd, env=env)


def _one_error_line(done: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, done.stderr
    return errors[0]


@pytest.mark.parametrize("game", ["0", "4", "-1"])
def test_cli_bad_game_names_the_allowed_range_in_one_line(tmp_path, games_file, game):
    done = _cli(["html", str(games_file), "--game", game, "--out", "page.html"], tmp_path)
    assert done.returncode == 2
    assert _one_error_line(done).endswith(f"--game {game}: {games_file} holds 3 record(s), so --game must be 1..3")
    assert list(tmp_path.iterdir()) == []


def test_cli_checks_out_before_reading_the_records(tmp_path):
    """--out is checked first: a bad folder is the error even when FILE does not exist either."""
    done = _cli(["html", "missing.jsonl", "--out", "nosuchfolder/page.html"], tmp_path)
    assert done.returncode == 2 and "folder 'nosuchfolder' does not exist" in _one_error_line(done)


def test_cli_replaces_an_existing_page_only_with_overwrite(tmp_path, games_file):
    """As `records simulate --out`: an existing file is kept unless --overwrite; written atomically."""
    out = tmp_path / "page.html"
    out.write_text("old page")
    done = _cli(["html", str(games_file), "--out", str(out)], tmp_path)
    assert done.returncode == 2 and "exists; add --overwrite to replace it" in _one_error_line(done)
    assert out.read_text() == "old page"
    assert main(["html", str(games_file), "--game", "3", "--out", str(out), "--overwrite"]) == 0
    assert embedded(out.read_text(encoding="utf-8"))["final_scores"] == read_scores(games_file)[2]
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]  # no temporary file left


def read_scores(path: Path) -> list[list[int]]:
    return [json.loads(line)["scores"] for line in path.read_text().splitlines()]


def test_cli_broken_record_is_one_line_and_no_page(tmp_path, games, capsys):
    records = copy.deepcopy(games)
    records[1]["scores"][0] += 1
    path = tmp_path / "games.jsonl"
    write_jsonl(records, path)
    assert main(["html", str(path), "--game", "2", "--out", str(tmp_path / "page.html")]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"error: record 2 (line 2): the record does not replay: scores: R25: the totals of the deals' points "
        f"are {games[1]['scores']}, not {records[1]['scores']}"]
    assert not (tmp_path / "page.html").exists()


def _crafted(games: list[dict]) -> list[tuple[str, str]]:
    """(a record's JSON Lines text, the start of its one error line) for records that do not replay."""
    def changed(change) -> str:
        record = copy.deepcopy(games[0])
        change(record)
        return json.dumps(record)

    def drop_seed(record):
        del record["seed"]

    def card(record):
        record["deals"][0]["hands"][0][0] = "ZZ"

    def huge_seed(record):
        record["seed"] = 10**40

    def text_dealer(record):
        record["first_dealer"] = "north"

    def huge_score(record):
        record["scores"][2] = 2**70

    whole = json.dumps(games[0])
    return [
        (changed(card), "the record does not replay: deal 1, hands[0][0]: unknown card 'ZZ'"),
        (changed(drop_seed), "the record does not replay: missing key 'seed'"),
        (whole[: len(whole) // 2], "line 3 is not valid JSON"),  # a record cut short
        (changed(huge_seed), "the record does not replay: seed: expected an integer"),
        (changed(text_dealer), "the record does not replay: first_dealer"),
        (changed(huge_score), "the record does not replay: scores"),
        ("[1, 2, 3]", "the record does not replay"),
    ]


@pytest.mark.slow
def test_cli_crafted_records_are_one_line_each_under_python_m(tmp_path, games):
    """Issue 20, item 1: under `python -m` every record that does not replay printed a
    traceback (the records module was loaded twice, so its RecordError was not the one caught)."""
    crafted = _crafted(games)
    path = tmp_path / "crafted.jsonl"
    path.write_text("".join(text + "\n" for text, _ in crafted))
    for number, (_, expected) in enumerate(crafted, start=1):
        done = subprocess.run([*CLI, "html", str(path), "--game", str(number), "--out", str(tmp_path / "page.html")],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, (number, done.stderr)
        assert "Traceback" not in done.stderr, done.stderr
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith(f"error: record {number} (line {number}): {expected}"), line
        assert not (tmp_path / "page.html").exists()


def test_cli_a_failure_inside_the_replay_is_one_line_too(tmp_path, games_file, monkeypatch, capsys):
    import sergeant_major_env.cli.records as records_cli

    def broken(record, title):
        raise IndexError("index 99 is out of bounds")

    monkeypatch.setattr(records_cli, "page_data", broken)
    assert main(["html", str(games_file), "--out", str(tmp_path / "page.html")]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "error: record 1 (line 1): internal error while replaying (IndexError: index 99 is out of bounds); "
        "please report it"]
    assert not (tmp_path / "page.html").exists()


# ----------------------------------------------------------------------------- in a browser

def _browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("no headless Chromium found (apt-get install chromium); the page is tested without a browser")


def _dom(page: Path, hash_: str = "", size: str = "1000,700") -> str:
    """The page's DOM after its script ran, as headless Chromium dumps it (a window ``size`` wide, high)."""
    done = subprocess.run([_browser(), "--headless", "--disable-gpu", "--no-sandbox", f"--window-size={size}",
                           "--dump-dom", page.resolve().as_uri() + hash_], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class _TextOf(HTMLParser):
    """The text inside the element with a given id (its children's text included)."""

    def __init__(self, element_id: str) -> None:
        super().__init__()
        self.element_id, self.depth, self.parts, self.found = element_id, 0, [], False

    def handle_starttag(self, tag, attrs):
        if self.depth:
            self.depth += 1
        elif dict(attrs).get("id") == self.element_id:
            self.depth, self.found = 1, True

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.parts.append(data)


def _text(dom: str, element_id: str) -> str:
    parser = _TextOf(element_id)
    parser.feed(dom)
    assert parser.found, f"no #{element_id} in the page"
    return "".join(parser.parts)


def test_browser_shows_the_players_and_the_final_scores_at_final(page, games):
    """#final opens the last frame: the final section is shown, with each player and score."""
    dom = _dom(page, "#final")
    final = re.search(r'<section id="final"( hidden="")?>(.*?)</section>', dom, re.S)
    assert final and final.group(1) is None, "the final scores are hidden"
    rows = re.findall(r'class="final-name">(.*?)</td><td class="final-score">(.*?)</td>', final.group(2))
    assert rows == [(name, f"{score:+d}" if score else "0") for name, score in zip(SEATS, games[1]["scores"])]
    for seat, name in enumerate(SEATS):
        assert f'<h2 class="name">{name}</h2>' in dom
    frames = len(embedded(page.read_text(encoding="utf-8"))["frames"])
    assert _text(dom, "position") == f"{frames} / {frames}"


def test_browser_steps_with_the_keys_and_buttons(page, tmp_path):
    """The page's own key and button handlers, driven in the browser: Home, three Right arrows,
    one Left, the next-deal button, then End; each shows the frame the data says."""
    html = page.read_text(encoding="utf-8")
    data = embedded(html)
    frames = data["frames"]
    driver = """<script>
      function key(k) { document.dispatchEvent(new KeyboardEvent("keydown", {key: k})); }
      function seen(name) { document.body.dataset[name] = document.getElementById("position").textContent; }
      key("Home"); key("ArrowRight"); key("ArrowRight"); key("ArrowRight"); key("ArrowLeft"); seen("arrows");
      document.getElementById("next-deal").click(); seen("button");
      key("End");
    </script></body>"""
    driven = tmp_path / "driven.html"
    driven.write_text(html.replace("</body>", driver), encoding="utf-8")
    dom = _dom(driven, "#deal-5")
    second_deal = next(i for i, frame in enumerate(frames) if frame["deal"] == 1)
    assert f'data-arrows="3 / {len(frames)}"' in dom
    assert f'data-button="{second_deal + 1} / {len(frames)}"' in dom
    assert _text(dom, "caption") == frames[-1]["caption"]
    assert _text(dom, "position") == f"{len(frames)} / {len(frames)}"
    assert "Final scores" in frames[-1]["caption"] and all(name in frames[-1]["caption"] for name in SEATS)


@pytest.mark.slow
def test_browser_opens_a_deal_by_hash_and_renders_a_screenshot(page, tmp_path):
    data = embedded(page.read_text(encoding="utf-8"))
    dom = _dom(page, "#deal-3")
    assert _text(dom, "caption").startswith("Deal 3 of 18: ")
    first = next(frame for frame in data["frames"] if frame["deal"] == 2)
    assert _text(dom, "caption") == first["caption"]
    shot = tmp_path / "shot.png"
    subprocess.run([_browser(), "--headless", "--disable-gpu", "--no-sandbox", "--window-size=1000,700",
                    f"--screenshot={shot}", page.resolve().as_uri() + "#deal-3"], capture_output=True, timeout=120)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_browser_deal_end_frames_show_each_seats_points_where_the_empty_hands_were(page, tmp_path):
    """At a deal's end every hand is empty: the hand boxes show the deal's points instead (and
    the final frame each seat's final score), never three empty boxes."""
    html = page.read_text(encoding="utf-8")
    data = embedded(html)
    at = next(i for i, frame in enumerate(data["frames"]) if frame["kind"] == "points")
    deal = data["deals"][data["frames"][at]["deal"]]
    driven = tmp_path / "points.html"
    driven.write_text(html.replace("</body>", f"<script>show({at});</script></body>"), encoding="utf-8")
    dom = _dom(driven)
    shown = re.findall(r'<span class="result">(.*?)</span>', dom)
    assert shown == [f"deal points {points:+d}" if points else "deal points 0" for points in deal["points"]]
    final = re.findall(r'<span class="result">(.*?)</span>', _dom(page, "#final"))
    assert final == [f"final score {score:+d}" if score else "final score 0" for score in data["final_scores"]]


def test_browser_keeps_each_suit_of_a_hand_on_one_line_at_phone_width(page, tmp_path):
    """At a phone's width (390 px) a seat's hand wraps between suits, never inside one: each suit
    group (``♠ A K 7``) is one ``span.suit-group`` (white-space: nowrap) holding one suit
    symbol, laid out on one line (its boxes share one bottom), and the groups together are the hand."""
    html = page.read_text(encoding="utf-8")
    data = embedded(html)
    driver = """<script>
      const groups = [...document.querySelectorAll(".hand .suit-group")];
      document.body.dataset.groups = groups.length;
      const lines = g => new Set([...g.getClientRects()].map(r => Math.round(r.bottom))).size;
      document.body.dataset.broken = groups.filter(g => lines(g) !== 1).length;
      const hands = [...document.querySelectorAll(".hand .suit-groups")];
      document.body.dataset.wrapped = hands.filter(h => lines(h) > 1).length;
      document.body.dataset.wrapping = groups.filter(g => getComputedStyle(g).whiteSpace !== "nowrap").length;
      const symbols = g => [...g.textContent].filter(ch => "\u2660\u2663\u2665\u2666".includes(ch)).length;
      document.body.dataset.oneSuit = groups.filter(g => symbols(g) === 1).length;
    </script></body>"""
    driven = tmp_path / "narrow.html"
    driven.write_text(html.replace("</body>", driver), encoding="utf-8")
    dom = _dom(driven, "#frame-1", size="390,844")
    first = data["frames"][0]["hands"]
    suits = sum(len(hand.split("   ")) for hand in first)
    assert suits >= 9  # three dealt hands of several suits each
    assert f'data-groups="{suits}"' in dom and f'data-one-suit="{suits}"' in dom
    assert 'data-broken="0"' in dom and 'data-wrapping="0"' in dom
    assert not re.search(r'data-wrapped="0"', dom)  # the hands do wrap at this width: between suits
    hands = re.findall(r'<div class="hand">(.*?)</div>', dom)
    assert [re.sub(r"<[^>]+>", "", hand) for hand in hands] == first


def test_browser_marks_the_games_winners_at_final(page):
    """The final frame marks the winners of the game (the highest final score), not a trick's."""
    data = embedded(page.read_text(encoding="utf-8"))
    dom = _dom(page, "#final")
    best = max(data["final_scores"])
    marked = re.findall(r'<section class="seat( winner)?" id="seat-(\d)">', dom)
    winners = [str(seat) for seat, score in enumerate(data["final_scores"]) if score == best]
    assert [seat for winner, seat in marked if winner] == winners
    final = re.search(r'<section id="final"( hidden="")?>(.*?)</section>', dom, re.S).group(2)
    assert len(re.findall(r'<tr class="winner">', final)) == data["final_scores"].count(best)
