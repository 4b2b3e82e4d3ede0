"""Play 3-5-8 in a browser against agents: a small local server (`sergeant-major play --web`).

The game runs here, in the engine; the page (one self-contained HTML file put together from
the files of `sergeant_major_env.pages`) only draws what it is sent and sends the
person's moves back. The package is split by job: `.view` (what the seat sees),
`.game` (one running game), `.server` (the options, the HTTP server and the
command's serve loop); its public names are all importable from here.

**Only the seat's view leaves the server.** Every response is built from what the person's
seat knows: each *view* is `seat_view`, made from `observation.decode(observe(state,
seat))` (own hand, the first six cards only during the own mode choice, R9; the talon once
turned face up; own discards; own exchange cards, R22; the public table), plus the legal
moves and the reasons the others are refused, which depend on the own hand and the table
alone. What happened is told in the one renderer's words (`render.Narrator`, which
shows a pair's cards only to the pair, R22, and discards only to the playmaker). A step the
seat cannot see (another pair's trump given, the playmaker's first three discards) is not
even sent as an event of its own. The seed, which decides every deal, is sent only once
the game is over.

**The server holds up.** Each game has its own id and an unguessable token; a bad or
replayed request (a stale move number, a wrong id or token, bad JSON, a body over
`WebOptions.max_body` bytes, an unknown path or method) gets a 4xx with one line of
text and changes nothing. Bots think in a worker thread per game, so other games'
requests are answered meanwhile. A game left idle for `WebOptions.expire_after`
seconds is dropped; at most `WebOptions.max_games` unfinished games run at once.

**Other sites' pages get nothing.** The person plays on this machine, and the web pages
open in the same browser may be hostile: they can send requests to any address, and
through DNS rebinding even read the answers. So a request must name this server in its
`Host` (421 otherwise), a POST must carry this server as its `Origin` when it sends one
(403) and declare its body `application/json` (415), and no page may frame this one
(`Content-Security-Policy` with `frame-ancestors 'none'`, `X-Frame-Options: DENY`;
the page runs only its own script and style). Numbers are ASCII digits within bounds, a
body is at most `WebOptions.max_body` bytes nested at most `MAX_DEPTH` deep,
and a body that has not arrived `WebOptions.read_timeout` seconds after its headers,
or a request line or header stalled that long, is dropped (408): each gets one line, and
nothing reaches the terminal.

With a record file, every finished game is written to it (JSON Lines, RULES.md section 11)
atomically, the file holding all games this server finished.

The HTTP interface (JSON unless said; a POST's body is `Content-Type: application/json`):

| method | path | what |
|---|---|---|
| GET | `/` | the page (HTML) |
| POST | `/api/games` | a new game: `{"game", "token", ...}` (201) |
| GET | `/api/games/ID?since=N&wait=S` | the events from number N on (waiting up to S seconds, at most 20, for one); header `X-Token`; N and S 0..1000000 |
| POST | `/api/games/ID/move` | `{"move": k, "action": a}`: the person's k-th decision (0-based) is action a (RULES.md section 10) |
| GET | `/games/ID/replay?token=T` | the replay page of the finished game (HTML) |

This package never imports [`sergeant_major_env.agents`][]: the command line
(`sergeant_major_env.cli.play`) resolves agent names and passes a factory of agents in.
"""

from .game import Refused, WebGame
from .server import (MAX_DEPTH, MAX_SINCE, MAX_WAIT, MAX_WAIT_ASKED, WebHandler, WebOptions, WebServer,
                     content_security_policy, serve)
from .view import seat_view

__all__ = ["MAX_DEPTH", "MAX_SINCE", "MAX_WAIT", "MAX_WAIT_ASKED", "Refused", "WebGame", "WebHandler", "WebOptions",
           "WebServer", "content_security_policy", "seat_view", "serve"]
