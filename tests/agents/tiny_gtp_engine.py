"""A tiny GTP engine for the match tests: it knows only the protocol and misbehaves on purpose.

    python tests/agents/tiny_gtp_engine.py MODE

MODE says what it does wrong: ``crash`` (exits on genmove), ``garbage`` (a reply without '='), ``illegal`` (plays
a1, never legal at the start), ``slow`` (never answers genmove), ``refuse`` (refuses every play), ``disagree``
(all_legal lists one illegal move), ``resign`` (resigns every genmove), ``mute`` (exits at once), ``badutf8``
(answers genmove with bytes that are not UTF-8), ``flood`` (answers genmove with 5 MB of newlines, then a move),
``longline`` (answers genmove with a 5 MB line), ``chatty`` (answers genmove with a 5 MB reply of short lines).
Standard library only, so it starts in milliseconds.
"""

import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "resign"
if mode == "mute":
    sys.exit(0)
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    command = words[0]
    reply = "= "
    if command == "quit":
        print("=\n", flush=True)
        break
    if command == "known_command":
        reply = "= " + ("true" if words[1] in ("set_game", "all_legal") and mode == "disagree" else "false")
    elif command == "genmove":
        junk = {
            "badutf8": b"= \xff\xfe\xfd a1\n\n",
            "flood": b"\n" * 5_000_000 + b"= a1\n\n",
            "longline": b"= " + b"a1," * 1_700_000 + b"\n\n",
            "chatty": b"= a1\n" + b"a1\n" * 1_700_000 + b"\n",
        }.get(mode)
        if junk is not None:
            try:
                sys.stdout.buffer.write(junk)
                sys.stdout.flush()
            except OSError:
                sys.exit(1)  # the client stopped reading (it killed us, or closed the pipe)
            continue
        if mode == "crash":
            sys.exit(3)
        if mode == "slow":
            time.sleep(60)
        reply = {"garbage": "hello world", "illegal": "= a1", "resign": "= resign"}.get(mode, "= a1")
    elif command == "play" and mode == "refuse":
        reply = "? no"
    elif command == "all_legal":
        reply = "= a1"
    print(reply + "\n", flush=True)
