"""The HTTP server of `play --web`: its options, the games it runs, the requests it answers
and refuses, and the command's serve loop (the promises are in `sergeant_major_env.web`).

Before a path is looked at, a request must name this server in `Host` (421) and a POST must
come from this server's own page (`Origin`: 403; `Content-Type: application/json`: 415).
Every answer forbids framing; a page may run only its own inline script and style, allowed by
their SHA-256 (`content_security_policy`). The page itself is put together from its
files by `sergeant_major_env.pages.play_page`.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import ipaddress
import json
import re
import secrets
import signal
import sys
import threading
import time
import webbrowser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Sequence, TextIO
from urllib.parse import parse_qs, urlsplit

from .. import render
from ..limits import cut_middle
from ..pages import play_page
from ..records import write_jsonl
from ..replay_page import page_data, page_html
from ..rules import Rules
from ..seeding import check_seed
from .game import Refused, WebGame

MAX_WAIT = 20.0
"""The longest a GET of a game's events waits for a new one (seconds)."""

MAX_WAIT_ASKED = 10**6
"""The largest `wait` a GET may ask for (it waits `MAX_WAIT` at most)."""

MAX_SINCE = 10**6
"""The largest event number `since` a GET may ask from (a game has far fewer events)."""


@dataclasses.dataclass(frozen=True)
class WebOptions:
    """How the server plays: the person's seat, the first game's seed (None: random; "play
    again" always draws a new one), the rules, the pace the page shows the bots' moves at,
    when idle games expire, the record file, and the server's limits: unfinished games at once
    (finished ones, kept for their replay page, do not count), a request body's bytes, and
    the seconds a body may take to arrive after its headers, and a request line or header
    may stall (a slow or short body is refused with 408, never holding a thread)."""

    seat: int = 0
    seed: int | None = None
    rules: Rules = dataclasses.field(default_factory=Rules)
    pace: float = 0.8
    expire_after: float = 1800.0
    record: str | None = None
    max_games: int = 32
    max_body: int = 4096
    read_timeout: float = 10.0

    def __post_init__(self) -> None:
        if self.seat not in (0, 1, 2):
            raise ValueError(f"the person's seat must be 0, 1 or 2, got {self.seat!r}")
        if self.seed is not None:
            check_seed(self.seed)
        if not 0 <= self.pace <= 10:
            raise ValueError(f"--pace must be 0..10 seconds, got {self.pace}")
        if self.expire_after <= 0:
            raise ValueError(f"idle games must expire after a positive number of seconds, got {self.expire_after}")
        if not 0 < self.read_timeout <= 600:
            raise ValueError(f"the read timeout must be 0..600 seconds (above 0), got {self.read_timeout}")


class WebServer(ThreadingHTTPServer):
    """The games of one `play --web`; `opponents()` makes the two agents of a new game (for
    the seats other than the person's, in seat order), `names` are theirs."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], opponents: Callable[[], Sequence[Any]], names: Sequence[str],
                 options: WebOptions, output: TextIO | None = None) -> None:
        super().__init__(address, WebHandler)
        self.opponents, self.options = opponents, options
        self.opponent_names = list(names)
        self.output = output if output is not None else sys.stdout
        self.games: dict[str, WebGame] = {}
        self.lock = threading.Lock()
        self.next_seed = options.seed
        self.finished: list[dict[str, Any]] = []
        named = {address[0], self.server_address[0], "localhost", "127.0.0.1", "::1"}
        self.host_names = {_bracketed(name.lower()) for name in named}
        self.any_address = self.server_address[0] in ("0.0.0.0", "::")  # every address of this machine
        self.page = play_page(options.pace)  # and the policy that lets its own script and style run
        self.page_policy = content_security_policy(self.page)

    def serves(self, host: str) -> bool:
        """Whether `host` (a `Host` header, or an `Origin` without its `http://`) names
        this server: the port it listens on, and the name it was given, its address, a loopback
        name (localhost, 127.0.0.1, [::1]) or, listening on every address (0.0.0.0), any
        address (an IP literal: a DNS-rebinding page's host is always a name)."""
        match = _HOST.fullmatch(host)
        if not match:
            return False
        name, port = match.group(1).lower(), int(match.group(2) or 80)
        if port != self.server_address[1]:
            return False
        if name in self.host_names:
            return True
        try:
            address = ipaddress.ip_address(name.strip("[]"))
        except ValueError:
            return False
        if name.startswith("[") != (address.version == 6):
            return False  # an IPv6 address is bracketed in a Host, an IPv4 one is not
        return address.is_loopback or self.any_address

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"

    def new_game(self) -> WebGame:
        """A new game, its bots started; 429 when `max_games` unfinished games are running
        (finished games do not count: the oldest seen of them are dropped to keep at most
        `max_games` for their replay pages)."""
        self.expire()
        with self.lock:
            running = [game for game in self.games.values() if not game.finished]
            if len(running) >= self.options.max_games:
                raise Refused(429, f"too many games at once ({self.options.max_games} unfinished); finish or leave "
                                   f"one (idle games expire after {self.options.expire_after:g} s)")
            finished = sorted((game for game in self.games.values() if game.finished), key=lambda g: g.last_seen)
            for game in finished[:max(0, len(finished) - self.options.max_games + 1)]:
                del self.games[game.id]
            seed = self.next_seed if self.next_seed is not None else secrets.randbelow(2**31)
            self.next_seed = None  # --seed is the first game's; "play again" deals new cards
            names = [render.YOU] * 3
            opponents = list(self.opponents())
            agents: list[Any] = [None] * 3
            for seat, agent, name in zip([s for s in range(3) if s != self.options.seat], opponents,
                                         self.opponent_names):
                agents[seat], names[seat] = agent, name
            game_id = secrets.token_urlsafe(9)
            game = WebGame(game_id, agents, names, self.options.seat, seed, self.options.rules, self._game_over)
            self.games[game_id] = game
        game.start_bots()
        return game

    def find(self, game_id: str, token: str | None) -> WebGame:
        with self.lock:
            game = self.games.get(game_id)
        if game is None:
            raise Refused(404, f"no game {game_id!r} here (games left idle for "
                               f"{self.options.expire_after / 60:g} min expire); start a new one")
        if not token or not hmac.compare_digest(token.encode(), game.token.encode()):
            raise Refused(403, f"wrong or missing token for game {game_id!r}")
        game.last_seen = time.monotonic()
        return game

    def expire(self) -> None:
        """Drop the games nobody asked about for `expire_after` seconds."""
        now = time.monotonic()
        with self.lock:
            idle = [g for g in self.games.values() if now - g.last_seen > self.options.expire_after]
            for game in idle:
                del self.games[game.id]
        for game in idle:
            with game.changed:
                game.cancelled = True
                game.changed.notify_all()

    def service_actions(self) -> None:  # called by serve_forever about twice a second
        self.expire()

    def _game_over(self, game: WebGame) -> None:
        """Keep the record; with a record file, write all finished games to it atomically."""
        if self.options.record is None or game.record is None:
            return
        with self.lock:
            self.finished.append(game.record)
            try:
                write_jsonl(self.finished, self.options.record)  # a temporary file renamed: never half written
            except OSError as error:
                print(f"sergeant-major play: error: cannot write {self.options.record}: {error.strerror or error}",
                      file=sys.stderr)
                return
        print(f"wrote {len(self.finished)} game record(s) to {self.options.record}", file=self.output, flush=True)

    def stop_games(self) -> int:
        """Cancel every game; the number of unfinished ones."""
        with self.lock:
            games = list(self.games.values())
            self.games.clear()
        for game in games:
            with game.changed:
                game.cancelled = True
                game.changed.notify_all()
        return sum(not game.over for game in games)


def _bracketed(host: str) -> str:
    """A host as a `Host` header writes it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


_HOST = re.compile(r"(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9.-]{1,253})(?::([0-9]{1,5}))?")
"""A `Host` header: a name or address (IPv6 in brackets), and an optional port (ASCII digits)."""

_INLINE = re.compile(r"<(script|style)>(.*?)</\1>", re.S)
"""A page's own script and style elements (a `<script type=...>` data block is not run)."""


def content_security_policy(html: str) -> str:
    """The `Content-Security-Policy` of a page of this server: its own inline script and
    style run (by their SHA-256, so no other script does, even one put into the page), it
    talks to this server only, and no other site may frame it (clickjacking)."""
    hashes: dict[str, list[str]] = {"script": [], "style": []}
    for kind, text in _INLINE.findall(html):
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        hashes[kind].append(f"'sha256-{digest}'")
    return ("default-src 'self'; script-src " + (" ".join(hashes["script"]) or "'none'") + "; style-src "
            + (" ".join(hashes["style"]) or "'none'") + "; object-src 'none'; base-uri 'none'; form-action 'self'; "
            "frame-ancestors 'none'")


_GAME_PATH = re.compile(r"^/api/games/([A-Za-z0-9_-]{1,64})$")
_MOVE_PATH = re.compile(r"^/api/games/([A-Za-z0-9_-]{1,64})/move$")
_REPLAY_PATH = re.compile(r"^/games/([A-Za-z0-9_-]{1,64})/replay$")


MAX_DEPTH = 8
"""The deepest a request body's JSON may nest (a move is one flat object)."""

_LENGTH = re.compile(r"[0-9]{1,18}")
"""A `Content-Length`: ASCII digits only (`str.isdigit` would take `²` or `٣`)."""

_NOT_A_PAGE = "default-src 'none'; frame-ancestors 'none'"
"""The `Content-Security-Policy` of an answer that is not a page (JSON, a line of text)."""


class WebHandler(BaseHTTPRequestHandler):
    """The HTTP interface of `WebServer` (see the module docstring).

    Before a path is looked at, a request must name this server in `Host` (421 otherwise:
    a page of another site reaching it through DNS rebinding names its own host), and a POST
    must come from this server's own page: its `Origin`, when sent, is this server (403),
    and its body is declared `application/json` (415; another site's form or "simple"
    request cannot declare it without a CORS preflight, and `OPTIONS` is refused). Every
    answer forbids framing (`frame-ancestors 'none'`, `X-Frame-Options: DENY`); a page
    may run only its own script and style (`content_security_policy`)."""

    server: WebServer
    server_version = "sergeant-major-web"

    def setup(self) -> None:
        self.timeout = self.server.options.read_timeout  # the socket's: a slow request is dropped, never held
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # no access log: the terminal shows the address and the records written

    # ------------------------------------------------------------------ answers

    def _send(self, status: int, body: bytes, content_type: str, policy: str = _NOT_A_PAGE) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", policy)
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, value: Any, status: int = 200) -> None:
        self._send(status, json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(),
                   "application/json; charset=utf-8")

    def _html(self, text: str, policy: str | None = None) -> None:
        self._send(200, text.encode(), "text/html; charset=utf-8",
                   content_security_policy(text) if policy is None else policy)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a malformed request line, an unknown method, a line or
        headers too long) as one line of text too, not its HTML page."""
        self.close_connection = True
        line = " ".join((message or self.responses.get(code, ("refused",))[0]).split())
        self._send(code, (line + "\n").encode(), "text/plain; charset=utf-8")

    def _refuse(self, refused: Refused) -> None:
        line = " ".join(str(refused).split())  # one line
        self.close_connection = True
        self._send(refused.status, (line + "\n").encode(), "text/plain; charset=utf-8")

    def _handle(self, route: Callable[[], None]) -> None:
        try:
            try:
                self._check_sender()
                route()
            except Refused as refused:
                self._refuse(refused)
        except ConnectionError:  # the page went away mid-answer (a closed tab, a reload): nothing to say
            self.close_connection = True

    def _check_sender(self) -> None:
        """421 unless `Host` names this server; 403 for a POST whose `Origin` is another site."""
        host = self.headers.get("Host")
        if host is None or not self.server.serves(host):
            raise Refused(421, f"this server does not answer for host {cut_middle(repr(host), 80)}: open "
                               f"{self.server.url} (or localhost with its port)")
        origin = self.headers.get("Origin")
        if self.command not in ("GET", "HEAD") and origin is not None and not (
                origin.startswith("http://") and self.server.serves(origin[len("http://"):])):
            raise Refused(403, f"refused: a request from another site's page (Origin {cut_middle(repr(origin), 80)}); "
                               f"only this server's own page may change its games")

    # ------------------------------------------------------------------ requests

    def _query(self) -> tuple[str, dict[str, list[str]]]:
        parts = urlsplit(self.path)
        return parts.path, parse_qs(parts.query)

    def _token(self, query: dict[str, list[str]]) -> str | None:
        return self.headers.get("X-Token") or (query.get("token") or [None])[0]

    def _body(self) -> Any:
        """The request's JSON object (an empty body is `{}`): declared JSON, its length in
        ASCII digits, at most `max_body` bytes, all arriving within `read_timeout`."""
        options = self.server.options
        kind = self.headers.get("Content-Type", "")
        if kind.split(";")[0].strip().lower() != "application/json":
            raise Refused(415, f"the body must be sent as Content-Type: application/json, "
                               f"got {cut_middle(repr(kind), 80)}")
        if "Transfer-Encoding" in self.headers:
            raise Refused(411, "send the body with a Content-Length (Transfer-Encoding is not supported)")
        length = self.headers.get("Content-Length", "0")
        if not _LENGTH.fullmatch(length):
            raise Refused(400, f"bad Content-Length {cut_middle(repr(length), 40)}: a number of bytes in ASCII digits")
        if int(length) > options.max_body:
            raise Refused(413, f"request body too large: {length} bytes (at most {options.max_body})")
        raw = self._read(int(length))
        if len(raw) < int(length):
            raise Refused(400, f"the body ended after {len(raw)} of its {length} bytes (Content-Length)")
        return _json_object(raw)

    def _read(self, length: int) -> bytes:
        """Up to `length` bytes of the body (fewer when the sender closes first), all within
        `read_timeout` seconds: a body trickling in byte by byte gets a 408 too."""
        timeout = self.server.options.read_timeout
        deadline, chunks, left = time.monotonic() + timeout, [], length
        try:
            while left:
                self.connection.settimeout(max(deadline - time.monotonic(), 0.001))
                chunk = self.rfile.read1(left)
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
        except TimeoutError:
            raise Refused(408, f"the body did not arrive within {timeout:g} s (Content-Length {length})") from None
        finally:
            self.connection.settimeout(timeout)
        return b"".join(chunks)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._handle(self._get)

    def do_HEAD(self) -> None:  # noqa: N802
        self._handle(self._get)

    def do_POST(self) -> None:  # noqa: N802
        self._handle(self._post)

    def _not_allowed(self) -> None:
        self._handle(self._refused_method)

    def _refused_method(self) -> None:
        raise Refused(405, f"method {self.command} is not allowed here (GET, POST)")

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed

    def _get(self) -> None:
        path, query = self._query()
        if path in ("/", "/index.html"):
            self._html(self.server.page, self.server.page_policy)
            return
        if path == "/favicon.ico":  # browsers ask for it: no icon, and no error in the console
            self._send(204, b"", "text/plain")
            return
        match = _GAME_PATH.match(path)
        if match:
            game = self.server.find(match.group(1), self._token(query))
            since = _number(query, "since", MAX_SINCE)
            wait = min(_number(query, "wait", MAX_WAIT_ASKED), MAX_WAIT)
            with game.changed:
                since = min(since, len(game.events))
                if wait:
                    game.wait(since, wait)
                answer = game.response(since)
            self._json(answer)
            return
        match = _REPLAY_PATH.match(path)
        if match:
            game = self.server.find(match.group(1), self._token(query))
            with game.changed:
                record = game.record
            if record is None:
                raise Refused(409, "the game is not over yet: its replay page comes at the end")
            self._html(page_html(page_data(record, title="3-5-8 game played in the browser")))
            return
        raise Refused(404, f"no such page: {path} (the game is at /)")

    def _post(self) -> None:
        path, query = self._query()
        if path == "/api/games":
            self._body()
            game = self.server.new_game()
            with game.changed:
                answer = game.response(0)
            answer["token"] = game.token
            self._json(answer, 201)
            return
        match = _MOVE_PATH.match(path)
        if match:
            game = self.server.find(match.group(1), self._token(query))
            body = self._body()
            missing = [key for key in ("move", "action") if key not in body]
            if missing:
                raise Refused(400, f"a move needs {' and '.join(missing)}: send {{\"move\": k, \"action\": a}}")
            since = body.get("since", 0)
            since = since if isinstance(since, int) and not isinstance(since, bool) and since >= 0 else 0
            game.move(body["move"], body["action"])
            with game.changed:
                answer = game.response(min(since, len(game.events)))
            self._json(answer)
            return
        raise Refused(404, f"no such path: {path}")


def _number(query: dict[str, list[str]], name: str, high: int) -> int:
    """A query parameter 0..`high` in ASCII digits (0 when absent), or a 400 naming it and its range."""
    values = query.get(name)
    if not values:
        return 0
    text = values[0]
    if not re.fullmatch(f"[0-9]{{1,{len(str(high))}}}", text) or int(text) > high:
        raise Refused(400, f"{name} must be an integer 0..{high} in ASCII digits, got {cut_middle(repr(text), 40)}")
    return int(text)


def _json_object(raw: bytes) -> dict[str, Any]:
    """A request body's JSON object (`{}` for an empty body), or a 400 in one line: not
    UTF-8, not JSON, nested more than `MAX_DEPTH` deep, or not an object."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Refused(400, f"bad JSON: not UTF-8 ({error.reason} at byte {error.start})") from None
    if not text.strip():
        return {}
    if _too_deep(text):
        raise Refused(400, f"bad JSON: nested more than {MAX_DEPTH} deep")
    try:
        body = json.loads(text)
    except (ValueError, RecursionError) as error:  # JSONDecodeError; an integer of over 4300 digits
        raise Refused(400, f"bad JSON: {cut_middle(str(error), 200)}") from None
    if not isinstance(body, dict):
        raise Refused(400, "the body must be a JSON object")
    return body


def _too_deep(text: str) -> bool:
    """Whether `text`'s arrays and objects nest more than `MAX_DEPTH` deep (brackets
    inside strings do not count); checked before parsing, which would recurse that deep."""
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif char in "]}":
            depth -= 1
    return False


def serve(opponents: Callable[[], Sequence[Any]], names: Sequence[str], options: WebOptions,
          host: str = "127.0.0.1", port: int = 0, open_browser: bool = True, output: TextIO | None = None,
          ready: Callable[[WebServer], None] | None = None) -> int:
    """Serve games until a stop signal; the exit status (1 when the address cannot be used, 130
    after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP). `ready(server)` is called once it
    listens (tests)."""
    output = output if output is not None else sys.stdout
    try:
        server = WebServer((host, port), opponents, names, options, output)
    except OSError as error:
        print(f"sergeant-major play: error: cannot listen on {host}:{port}: {error.strerror or error}",
              file=sys.stderr)
        return 1
    seat = options.seat
    try:  # from the moment the address is out, a stop signal is a clean stop
        print(f"3-5-8 in your browser: {server.url}  (you hold seat {seat}; opponents: "
              f"{', '.join(names)}; {options.rules.num_deals} deal(s); Ctrl-C stops the server)", file=output,
              flush=True)
        if ready is not None:
            ready(server)
        if open_browser:
            webbrowser.open(server.url)
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt as error:  # Ctrl-C, or SIGTERM / SIGHUP under interrupts.handled
        from .. import interrupts

        for number in interrupts.STOP_SIGNALS:  # a second signal does not break the clean stop
            signal.signal(number, signal.SIG_IGN)
        unfinished = server.stop_games()
        server.server_close()
        left = f"; {unfinished} unfinished game(s) not recorded" if unfinished and options.record else ""
        number = interrupts.signal_of(error)
        print(f"\nstopped ({'Ctrl-C' if number == signal.SIGINT else interrupts.signal_name(number)}){left}.",
              file=output, flush=True)
        return interrupts.exit_status(error)
    server.server_close()
    return 0
