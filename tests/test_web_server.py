"""The server of ``play --web`` holds up (sergeant_major_env.web): games do not mix, a bad or
replayed request gets a 4xx with one line and changes nothing, idle games expire, the bots
think without blocking other games, a finished game is recorded atomically, its replay page
is served, and Ctrl-C stops the command cleanly (exit status 130)."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Iterator
from pathlib import Path

import pytest

from conftest import default_stop_signals
from sergeant_major_env import web
from sergeant_major_env.policies import RandomPolicy
from sergeant_major_env.records import check_record, read_jsonl
from sergeant_major_env.rules import Rules

ROOT = Path(__file__).resolve().parents[1]


class Client:
    """Requests to a server running in this process."""

    def __init__(self, server: web.WebServer, token: str = "") -> None:
        self.host, self.port = server.server_address[:2]
        self.token = token

    def request(self, method: str, path: str, body=None, raw: bytes | None = None,
                headers: dict | None = None) -> tuple[int, str]:
        """``method path`` as the page sends it (a POST's body declared JSON); ``headers`` add
        to or replace those, ``None`` values are left out."""
        status, _, text = self.exchange(method, path, body, raw, headers)
        return status, text

    def exchange(self, method: str, path: str, body=None, raw: bytes | None = None,
                 headers: dict | None = None) -> tuple[int, http.client.HTTPMessage, str]:
        """The status, headers and text of the answer to ``method path``."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        data = raw if raw is not None else None if body is None else json.dumps(body)
        sent = {"X-Token": self.token, **({"Content-Type": "application/json"} if method == "POST" else {}),
                **(headers or {})}
        connection.request(method, path, body=data, headers={k: v for k, v in sent.items() if v is not None})
        response = connection.getresponse()
        text = response.read().decode()
        connection.close()
        return response.status, response.headers, text

    def new_game(self) -> dict:
        status, text = self.request("POST", "/api/games", {})
        assert status == 201, text
        answer = json.loads(text)
        self.token = answer["token"]
        return answer

    def events(self, game: str, since: int = 0, wait: int = 0) -> dict:
        status, text = self.request("GET", f"/api/games/{game}?since={since}&wait={wait}")
        assert status == 200, text
        return json.loads(text)

    def until_my_turn(self, game: str) -> dict:
        """The game's events once the person is to act (or the game is over)."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            answer = self.events(game, 0, 0)
            last = answer["events"][-1]["view"]
            if answer["over"] or last["legal"]:
                return answer
            time.sleep(0.01)
        raise AssertionError("the bots never gave the turn back")


class SlowRandom(RandomPolicy):
    """A random bot that thinks for ``seconds`` each move (a stand-in for a search bot)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def act(self, observations, legal_mask, rng):
        time.sleep(self.seconds)
        return super().act(observations, legal_mask, rng)


@contextlib.contextmanager
def _serve(options: web.WebOptions, opponents=lambda: [RandomPolicy(), RandomPolicy()]) -> Iterator[web.WebServer]:
    """A server on a free port of 127.0.0.1, in a thread, stopped and closed on leaving."""
    server = web.WebServer(("127.0.0.1", 0), opponents, ["random", "random"], options)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture()
def server():
    with _serve(web.WebOptions(seed=11, rules=Rules(num_deals=1), pace=0)) as server:
        yield server


def _one_line(text: str) -> str:
    assert text.endswith("\n") and text.count("\n") == 1, text
    return text.strip()


def _play_out(client: Client, game: str) -> dict:
    """Play the person's first legal move until the game ends; the last answer."""
    while True:
        answer = client.until_my_turn(game)
        if answer["over"]:
            return answer
        view = answer["events"][-1]["view"]
        status, text = client.request("POST", f"/api/games/{game}/move", {"move": view["move"], "action": view["legal"][0]})
        assert status == 200, text


# ----------------------------------------------------------------------------- refusals

def test_bad_and_replayed_requests_get_one_line_4xx_and_change_nothing(server):
    """Stale move numbers (a second click, an old page), illegal moves (with the rule's
    reason), bad ids, tokens, JSON, sizes, paths and methods: one line each, nothing changed."""
    client = Client(server)
    game = client.new_game()["game"]
    answer = client.until_my_turn(game)
    view = answer["events"][-1]["view"]
    illegal = next(int(a) for a in view["refusals"])
    bad = [
        (("POST", f"/api/games/{game}/move", {"move": view["move"] + 1, "action": view["legal"][0]}), 409, "stale move"),
        (("POST", f"/api/games/{game}/move", {"move": view["move"], "action": illegal}), 422, "is not allowed now: R"),
        (("POST", f"/api/games/{game}/move", {"move": view["move"], "action": 58}), 400, "an action id 0..57"),
        (("POST", f"/api/games/{game}/move", {"move": view["move"], "action": True}), 400, "0..57"),
        (("POST", f"/api/games/{game}/move", {"action": 3}), 400, "needs move"),
        (("POST", "/api/games/nosuchgame/move", {"move": 0, "action": 0}), 404, "no game 'nosuchgame'"),
        (("GET", "/api/games/nosuchgame", None), 404, "no game"),
        (("GET", f"/api/games/{game}?since=x", None), 400, "since must be an integer"),
        (("GET", "/nowhere", None), 404, "no such page"),
        (("POST", "/nowhere", {}), 404, "no such path"),
        (("DELETE", f"/api/games/{game}", None), 405, "not allowed"),
        (("GET", f"/games/{game}/replay", None), 409, "not over yet"),
    ]
    for (method, path, body), status, words in bad:
        got, text = client.request(method, path, body)
        assert got == status and words in _one_line(text), (method, path, body, got, text)
    for raw, status, words in ((b"{not json", 400, "bad JSON"), (b"[1, 2]", 400, "a JSON object"),
                               (b"x" * 5000, 413, "too large")):
        got, text = client.request("POST", f"/api/games/{game}/move", raw=raw)
        assert got == status and words in _one_line(text)
    stranger = Client(server, "not-the-token")
    got, text = stranger.request("GET", f"/api/games/{game}")
    assert got == 403 and "token" in _one_line(text)
    assert client.events(game) == answer  # nothing changed
    status, _ = client.request("POST", f"/api/games/{game}/move", {"move": view["move"], "action": view["legal"][0]})
    assert status == 200
    status, text = client.request("POST", f"/api/games/{game}/move", {"move": view["move"], "action": view["legal"][0]})
    assert status == 409 and "stale move" in _one_line(text)  # the same move sent twice counts once


def test_illegal_move_names_the_rule_in_words(server):
    """The refusal is the engine's reason (illegal_reason), worded for "you": here R13."""
    client = Client(server)
    game = client.new_game()["game"]
    while True:
        view = client.until_my_turn(game)["events"][-1]["view"]
        follow = [(int(a), reason) for a, reason in view["refusals"].items() if reason.startswith("R13")]
        if follow:
            break
        status, _ = client.request("POST", f"/api/games/{game}/move", {"move": view["move"], "action": view["legal"][0]})
        assert status == 200
    action, reason = follow[0]
    status, text = client.request("POST", f"/api/games/{game}/move", {"move": view["move"], "action": action})
    assert status == 422 and _one_line(text).endswith(reason) and reason.startswith("R13: you must follow suit")
    # Issue 50, item 6: a card not held is named in one notation, a ten as 10 (not "T♥ ... TH").
    ten = next(card for card in (8, 21, 34, 47) if card not in view["hand"])
    status, text = client.request("POST", f"/api/games/{game}/move", {"move": view["move"], "action": ten})
    shown = "10" + "\u2660\u2663\u2665\u2666"[ten // 13]
    assert status == 422 and _one_line(text) == f"{shown} is not allowed now: R12: you do not hold {shown}"


# ----------------------------------------------------------------------------- several games

def test_games_do_not_mix(server):
    """Two games at once: their own ids and tokens; one game's token opens no other game."""
    first, second = Client(server), Client(server)
    a, b = first.new_game(), second.new_game()
    assert a["game"] != b["game"] and first.token != second.token
    status, _ = first.request("GET", f"/api/games/{b['game']}")
    assert status == 403
    answer_b = second.until_my_turn(b["game"])
    final_a = _play_out(first, a["game"])
    assert final_a["over"] and second.events(b["game"]) == answer_b  # b untouched by a's moves


def test_bots_think_without_blocking_other_games():
    """While a slow bot thinks in one game, another game's requests are answered at once."""
    with _serve(web.WebOptions(seat=0, seed=5, rules=Rules(num_deals=1), pace=0),
                    opponents=lambda: [SlowRandom(0.5), SlowRandom(0.5)]) as server:
        slow = Client(server)
        game = slow.new_game()["game"]  # seed 5: a bot decides first
        assert slow.events(game)["thinking"]
        other = Client(server)
        started = time.monotonic()
        other_game = other.new_game()["game"]
        other.events(other_game)
        assert time.monotonic() - started < 0.4


def test_no_answer_shows_the_persons_turn_while_the_bots_still_think():
    """`thinking` is cleared with the bot's move that gives the person the turn: a page never
    sees its legal moves with the bots still marked as thinking (nor the other way round)."""
    with _serve(web.WebOptions(seat=0, seed=5, rules=Rules(num_deals=1), pace=0),
                opponents=lambda: [SlowRandom(0.002), SlowRandom(0.002)]) as server:
        client = Client(server)
        game = client.new_game()["game"]
        for _ in range(6):  # six of the person's turns, each polled as fast as it comes
            while True:
                answer = client.events(game)
                persons_turn = answer["over"] or bool(answer["events"][-1]["view"]["legal"])
                assert not (persons_turn and answer["thinking"]), answer["events"][-1]["view"]["move"]
                if persons_turn:
                    break
            if answer["over"]:
                break
            view = answer["events"][-1]["view"]
            status, text = client.request("POST", f"/api/games/{game}/move", {"move": view["move"],
                                                                              "action": view["legal"][0]})
            assert status == 200, text


def test_a_page_that_goes_away_mid_answer_prints_nothing_and_the_server_serves_on(server, capfd):
    """A closed tab during a long poll: the answer's write fails (the connection is reset);
    no traceback reaches the terminal, and the next request is answered as usual."""
    import socket
    import struct

    client = Client(server)
    game = client.new_game()["game"]
    since = client.until_my_turn(game)["next"]  # nothing new comes until the person moves: a long poll
    raw = socket.create_connection(server.server_address[:2], timeout=10)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = reset
    raw.sendall(f"GET /api/games/{game}?since={since}&wait=1 HTTP/1.1\r\nHost: 127.0.0.1:{client.port}\r\n"
                f"X-Token: {client.token}\r\n\r\n".encode())
    time.sleep(0.2)
    raw.close()
    time.sleep(1.5)  # the poll times out and its answer meets the reset connection
    assert client.events(game)["next"] == since
    assert "Traceback" not in capfd.readouterr().err


def test_idle_games_expire():
    with _serve(web.WebOptions(seed=3, rules=Rules(num_deals=1), pace=0, expire_after=0.3)) as server:
        client = Client(server)
        game = client.new_game()["game"]
        client.events(game)
        time.sleep(0.6)
        server.expire()
        status, text = client.request("GET", f"/api/games/{game}")
        assert status == 404 and "expire" in _one_line(text)


def test_too_many_games_is_a_4xx():
    with _serve(web.WebOptions(seed=3, rules=Rules(num_deals=1), pace=0, max_games=2)) as server:
        client = Client(server)
        client.new_game(), client.new_game()
        status, text = client.request("POST", "/api/games", {})
        assert status == 429 and "too many games" in _one_line(text)


# ----------------------------------------------------------------------------- the end of a game

def test_finished_games_are_recorded_and_replayable(tmp_path):
    """--record: each finished game is written (atomically, all games so far), the record
    replays in the engine, and the replay page of the game just played is served."""
    path = tmp_path / "games.jsonl"
    with _serve(web.WebOptions(seat=1, seed=8, rules=Rules(num_deals=1), pace=0, record=str(path))) as server:
        client = Client(server)
        for number in (1, 2):
            game = client.new_game()["game"]
            final = _play_out(client, game)
            records = list(read_jsonl(path))
            assert len(records) == number and check_record(records[-1]) is None
            assert records[-1]["scores"] == final["final_scores"] and records[-1]["players"][1] == "human"
            status, page = client.request("GET", final["replay"])
            assert status == 200 and 'id="replay-data"' in page
        assert records[0]["seed"] == 8 and records[1]["seed"] != 8  # play again: new cards
        assert sorted(p.name for p in tmp_path.iterdir()) == ["games.jsonl"]  # no temporary file left


def test_the_page_is_served_self_contained(server):
    """The page needs no network: no URL, no external script, style, image or font. It is the
    page files (sergeant_major_env/pages/) put together, each inlined as it is."""
    from sergeant_major_env import pages

    status, page = Client(server).request("GET", "/")
    assert status == 200
    assert page == pages.play_page(server.options.pace)
    for name in ("table.css", "play.css", "table.js", "play.js"):
        assert pages.read(name) in page, name
    assert "http://" not in page and "https://" not in page and "<link" not in page and "url(" not in page
    assert "@import" not in page and " src=" not in page


# ----------------------------------------------------------------------------- the command

def _command(*argv: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-m", "sergeant_major_env", "play", *argv], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_stop_signals)  # stoppable when the suite runs under nohup


def test_ctrl_c_stops_the_server_cleanly():
    """The address is printed; Ctrl-C ends the command with one line and exit status 130."""
    process = _command("--web", "--no-browser", "--opponents", "random,random", "--option", "num_deals=1")
    try:
        line = process.stdout.readline()
        assert line.startswith("3-5-8 in your browser: http://127.0.0.1:"), line
        url = line.split()[4]
        host, port = url.split("//")[1].rstrip("/").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        connection.request("GET", "/")
        assert connection.getresponse().status == 200
        connection.close()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 130 and out.strip() == "stopped (Ctrl-C)." and "Traceback" not in err


@pytest.mark.parametrize("argv, words", [
    (["--pace", "1"], "--pace: only with --web"),
    (["--web", "--pace", "11"], "--pace must be 0..10 seconds"),
    (["--web", "--port", "70000"], "--port must be 0..65535"),
    (["--web", "--opponents", "random,nosuchagent"], "nosuchagent"),
])
def test_command_refuses_bad_web_options_in_one_line(argv, words):
    process = _command(*argv)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 2 and "Traceback" not in err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and words in errors[0], err


def test_which_hosts_serve_this_machine_only_and_which_get_the_warning():
    from sergeant_major_env.cli.play import _loopback

    assert _loopback("127.0.0.1") and _loopback("127.3.2.1") and _loopback("::1") and _loopback("localhost")
    assert not _loopback("0.0.0.0") and not _loopback("192.168.1.5") and not _loopback("example.org")


# ----------------------------------------------------------------------------- other sites' pages, hostile requests

def _raw(server: web.WebServer, data: bytes, timeout: float = 10) -> tuple[bytes, float]:
    """Send ``data`` on a connection of its own; everything the server answers until it closes
    the connection, and the seconds that took."""
    started = time.monotonic()
    with socket.create_connection(server.server_address[:2], timeout=timeout) as connection:
        connection.sendall(data)
        chunks = []
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks), time.monotonic() - started


def _status_and_line(answer: bytes) -> tuple[int, str]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), _one_line(body.decode())


def test_a_page_of_another_site_can_neither_start_nor_change_a_game(server, capfd):
    """Another site's page can POST to this server (a form, a "simple" fetch) but cannot read
    the answer: its Origin gets 403, a body not declared JSON 415, a CORS preflight 405; no
    game is started (so no page can fill the cap and lock the person out), none changed."""
    client = Client(server)
    port = client.port
    hostile = [
        ({"Origin": "http://evil.example", "Content-Type": "text/plain"}, 403, "another site's page"),
        ({"Origin": "http://evil.example"}, 403, "another site's page"),
        ({"Origin": f"http://evil.example:{port}"}, 403, "another site's page"),
        ({"Origin": "null"}, 403, "another site's page"),  # a sandboxed frame, a file:// page
        ({"Origin": f"https://127.0.0.1:{port}"}, 403, "another site's page"),
        ({"Origin": f"http://127.0.0.1:{port + 1}"}, 403, "another site's page"),
        ({"Content-Type": "text/plain"}, 415, "Content-Type: application/json"),  # a browser that sends no Origin
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "application/json"),
        ({"Content-Type": None}, 415, "application/json"),
    ]
    for _ in range(3):
        for headers, status, words in hostile:
            got, text = client.request("POST", "/api/games", {}, headers=headers)
            assert got == status and words in _one_line(text), (headers, got, text)
    got, text = client.request("OPTIONS", "/api/games", headers={"Origin": "http://evil.example",
                                                                 "Access-Control-Request-Method": "POST"})
    assert got in (403, 405) and "Access-Control-Allow-Origin" not in text
    assert server.games == {}
    game = client.new_game()["game"]
    view = client.until_my_turn(game)["events"][-1]["view"]
    before = client.events(game)
    for headers, status, words in hostile:
        got, text = client.request("POST", f"/api/games/{game}/move", {"move": view["move"], "action": view["legal"][0]},
                                   headers=headers)
        assert got == status and words in _one_line(text), (headers, got, text)
    assert client.events(game) == before and len(server.games) == 1  # nothing changed
    for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):  # the page's own: served
        got, text = client.request("POST", "/api/games", {}, headers={"Origin": origin})
        assert got == 201, text
    assert "Traceback" not in capfd.readouterr().err


def test_a_request_for_another_host_is_refused(server, capfd):
    """DNS rebinding: a page of evil.example whose name now points at 127.0.0.1 reaches this
    server as the same site, but its requests name evil.example in Host: 421, one line, even
    with the game's token. This server's own names with its port are served."""
    client = Client(server)
    game = client.new_game()["game"]
    port = client.port
    for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1:{port + 1}", "127.0.0.1", f"localhost.:{port}",
                 f"127.0.0.1.evil.example:{port}", f"[127.0.0.1]:{port}", f"0.0.0.0:{port}", f"127.0.0.1:{port}x",
                 f"127.0.0.1:{chr(0xb2)}"):
        for method, path in (("GET", "/"), ("GET", f"/api/games/{game}"), ("POST", "/api/games")):
            got, text = client.request(method, path, {} if method == "POST" else None, headers={"Host": host})
            assert got == 421 and "does not answer for host" in _one_line(text), (host, method, path, got, text)
    answer, _ = _raw(server, b"GET / HTTP/1.0\r\n\r\n")  # no Host at all
    assert _status_and_line(answer)[0] == 421
    assert len(server.games) == 1
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}", f"127.0.0.2:{port}"):
        got, text = client.request("GET", f"/api/games/{game}", headers={"Host": host})
        assert got == 200, (host, text)
    assert "Traceback" not in capfd.readouterr().err


def test_what_http_server_itself_refuses_is_one_line_too(server, capfd):
    """A malformed request line, an unknown method, a header too long: http.server's own
    refusals are one line of text (not its HTML page), framing forbidden as everywhere."""
    for request in (b"GARBAGE\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n"):  # no version it knows: the line only
        answer, _ = _raw(server, request)
        assert _one_line(answer.decode()).startswith(("Bad request syntax", "Invalid HTTP version")), answer
    for request, status in ((b"FROB / HTTP/1.0\r\n\r\n", 501),
                            (b"GET / HTTP/1.0\r\nX-Long: " + b"x" * 70000 + b"\r\n\r\n", 431)):
        answer, _ = _raw(server, request)
        got, line = _status_and_line(answer)
        assert got == status and line and b"X-Frame-Options: DENY" in answer, (request[:20], answer[:300])
    assert "Traceback" not in capfd.readouterr().err


def test_which_hosts_a_server_answers_for():
    """Listening on every address (--host 0.0.0.0), any address of the machine is served, but
    still no name other than this server's own (a rebinding page's host is a name)."""
    with _serve(web.WebOptions(pace=0)) as server:
        port = server.server_address[1]
        assert server.serves(f"127.0.0.1:{port}") and server.serves(f"localhost:{port}")
        assert not server.serves(f"192.168.1.5:{port}") and not server.serves(f"evil.example:{port}")
        server.any_address = True  # as when listening on 0.0.0.0
        assert server.serves(f"192.168.1.5:{port}") and server.serves(f"[fe80::1]:{port}")
        assert not server.serves(f"evil.example:{port}") and not server.serves(f"192.168.1.5:{port + 1}")
    named = web.WebServer(("localhost", 0), lambda: [], [], web.WebOptions())
    try:
        port = named.server_address[1]
        assert named.serves(f"localhost:{port}") and named.serves(f"127.0.0.1:{port}")
    finally:
        named.server_close()


def test_no_page_may_frame_the_game_or_run_script_of_its_own(server):
    """Every answer forbids framing (clickjacking); the page's policy lets exactly its own
    inline script and style run (their SHA-256), nothing inline else, and it talks to this
    server only. (tests/test_web_browser.py checks the page still works under it.)"""
    import base64
    import hashlib
    import re

    client = Client(server)
    status, headers, page = client.exchange("GET", "/")
    assert status == 200 and headers["X-Frame-Options"] == "DENY"
    policy = headers["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'self'" and directives["frame-ancestors"] == "'none'"
    assert "unsafe" not in policy and "*" not in policy
    for kind in ("script", "style"):
        inline = re.findall(rf"<{kind}>(.*?)</{kind}>", page, re.S)
        digests = {f"'sha256-{base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()}'" for text in inline}
        assert len(inline) == 1 and set(directives[f"{kind}-src"].split()) == digests
    game = client.new_game()["game"]
    for method, path in (("GET", f"/api/games/{game}"), ("GET", "/nowhere"), ("POST", "/api/games")):
        _, headers, _ = client.exchange(method, path, {} if method == "POST" else None)
        assert headers["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in headers["Content-Security-Policy"]


@pytest.mark.parametrize("query, words", [
    ("since=%C2%B2", "since must be an integer 0..1000000 in ASCII digits"),   # ² (str.isdigit says yes)
    ("wait=%C2%B2", "wait must be an integer 0..1000000 in ASCII digits"),
    ("since=%D9%A3", "since must be an integer"),                              # ٣, an Arabic-Indic 3
    ("wait=%EF%BC%95", "wait must be an integer"),                             # ５, a full-width 5
    ("since=" + "9" * 8000, "since must be an integer"),                       # int() refuses 4300+ digits
    ("since=1000001", "since must be an integer"),
    ("since=-1", "since must be an integer"),
    ("since=+1", "since must be an integer"),
    ("since=%201", "since must be an integer"),
    ("wait=1.5", "wait must be an integer"),
])
def test_numbers_are_ascii_digits_within_bounds(server, capfd, query, words):
    client = Client(server)
    game = client.new_game()["game"]
    got, text = client.request("GET", f"/api/games/{game}?{query}")
    assert got == 400 and words in _one_line(text) and len(text) < 300
    assert client.events(game, since=1)["next"] >= 1  # ASCII digits in range: served
    assert "Traceback" not in capfd.readouterr().err


def test_bodies_are_bounded_in_length_size_and_nesting(capfd):
    """Content-Length in ASCII digits, a body at most max_body bytes, JSON nested at most
    MAX_DEPTH deep (deeper would reach Python's recursion limit), a whole number of digits
    Python reads: each refused in one line, the game unchanged."""
    with _serve(web.WebOptions(seed=11, rules=Rules(num_deals=1), pace=0, max_body=12_000)) as server:
        client = Client(server)
        game = client.new_game()["game"]
        view = client.until_my_turn(game)["events"][-1]["view"]
        before = client.events(game)
        move = f"/api/games/{game}/move"
        for raw, headers, status, words in [
            (b"{}", {"Content-Length": "\u00b2"}, 400, "bad Content-Length '\u00b2'"),
            (b"{}", {"Content-Length": "\u00b9"}, 400, "ASCII digits"),
            (b"{}", {"Content-Length": "+2"}, 400, "ASCII digits"),
            (b"{}", {"Content-Length": "9" * 8000}, 400, "bad Content-Length"),
            (b"{}", {"Content-Length": "99999999"}, 413, "too large"),
            (b"[" * 1000 + b"]" * 1000, {}, 400, f"nested more than {web.MAX_DEPTH} deep"),
            (b'{"a": ' * 1000 + b"1" + b"}" * 1000, {}, 400, "nested more than"),
            (b'{"move": 0, "action": ' + b"7" * 8000 + b"}", {}, 400, "bad JSON"),
            (b"\xff{}", {}, 400, "not UTF-8"),
        ]:
            got, text = client.request("POST", move, raw=raw, headers=headers)
            assert got == status and words in _one_line(text), (raw[:20], headers, got, text)
        assert client.events(game) == before
        shallow = {"move": view["move"], "action": view["legal"][0], "note": "[[[[[[[[[[[[[[[[[[[[[["}
        got, text = client.request("POST", move, shallow)  # brackets inside a string do not nest
        assert got == 200, text
        chunked = (f"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1:{client.port}\r\nContent-Type: application/json\r\n"
                   f"Transfer-Encoding: chunked\r\n\r\n2\r\n{{}}\r\n0\r\n\r\n")
        answer, _ = _raw(server, chunked.encode())
        assert _status_and_line(answer)[0] == 411 and len(server.games) == 1
    assert "Traceback" not in capfd.readouterr().err


def test_a_slow_or_short_request_is_dropped_after_the_read_timeout(capfd):
    """A body shorter than its Content-Length (the sender stalls), or a request line that
    never comes, no longer holds a thread: after read_timeout seconds the first gets a 408
    line and both connections are closed; a body cut short by a closed connection gets 400."""
    with _serve(web.WebOptions(seed=11, rules=Rules(num_deals=1), pace=0, read_timeout=0.5)) as server:
        client = Client(server)
        game = client.new_game()["game"]
        before = client.events(game)
        head = (f"POST /api/games/{game}/move HTTP/1.1\r\nHost: 127.0.0.1:{client.port}\r\nX-Token: {client.token}\r\n"
                f"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n").encode()
        answer, seconds = _raw(server, head + b'{"move": 0,')
        status, line = _status_and_line(answer)
        assert status == 408 and "did not arrive within 0.5 s" in line and 0.4 < seconds < 5
        answer, seconds = _raw(server, b"GET / HT")  # a request line that never ends
        assert 0.4 < seconds < 5
        with socket.create_connection(server.server_address[:2], timeout=10) as connection:
            started, sent = time.monotonic(), 0
            connection.sendall(head)
            while not select.select([connection], [], [], 0.1)[0]:  # a byte each 0.1 s until the answer
                connection.sendall(b" ")
                sent += 1
            answer = b"".join(iter(lambda: connection.recv(65536), b""))
            seconds = time.monotonic() - started
        assert _status_and_line(answer)[0] == 408 and 0.4 < seconds < 5 and sent < 50
        with socket.create_connection(server.server_address[:2], timeout=10) as connection:
            connection.sendall(head + b'{"move": 0,')
            connection.shutdown(socket.SHUT_WR)  # the body ends here
            answer = b"".join(iter(lambda: connection.recv(65536), b""))
        assert _status_and_line(answer) == (400, "the body ended after 11 of its 100 bytes (Content-Length)")
        assert client.events(game) == before
    assert "Traceback" not in capfd.readouterr().err
    with pytest.raises(ValueError, match="read timeout"):
        web.WebOptions(read_timeout=0)


def test_finished_games_do_not_count_against_the_cap():
    """With max_games=2, two finished games leave room for two more; only max_games finished
    games are kept (for their replay pages), the one seen last among them stays."""
    with _serve(web.WebOptions(seed=3, rules=Rules(num_deals=1), pace=0, max_games=2)) as server:
        client = Client(server)
        finals = []
        for _ in range(3):
            game = client.new_game()["game"]
            finals.append(_play_out(client, game))
        assert len(server.games) == 2  # the first finished game dropped for the third
        status, page = client.request("GET", finals[-1]["replay"])
        assert status == 200 and 'id="replay-data"' in page
        first, second = Client(server), Client(server)
        first.new_game(), second.new_game()  # two unfinished games: the cap
        status, text = client.request("POST", "/api/games", {})
        assert status == 429 and "2 unfinished" in _one_line(text)
